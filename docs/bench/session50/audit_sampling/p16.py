from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
b={"prompt":"Hi","max_tokens":2}
for kv in [{"stream":"true"},{"stream":1},{"echo":1},{"ignore_eos":"false"},{"stop":[None]},{"stop":None},{"seed":1.0},{"seed":True},{"max_tokens":3.0},{"max_tokens":"3"},{"n":"2"},{"stream":True,"stream_options":{"include_usage":"yes"}},{"model":""},{"model":"gpt-4"},{"model":"SmolLM2-135M-Instruct"},{"model":None},{"temperature":1e-300},{"top_p":5e-324},{"min_tokens":True},{"logit_bias":{"1":True}},{"stop_token_ids":[True]},{"allowed_token_ids":[1.0]},{"bad_words":"Paris"},{"bad_words":[""]},{"prompt_logprobs":0},{"prompt_logprobs":1,"stream":True},{"echo":True,"prompt_logprobs":1,"logprobs":2}]:
    r=post(CO,{**b,**kv}) if not kv.get("stream") is True else stream(CO,{**b,**kv})
    if isinstance(r[1],list): print(kv, r[0], str(r[1][:1])[:200]); continue
    show(str(kv)[:70], r)
# duplicate keys
show("dup keys temperature", post(CO, b'{"prompt":"Hi","max_tokens":3,"temperature":5,"temperature":0}', raw=True))
show("dup keys unknown shadow", post(CO, b'{"prompt":"Hi","max_tokens":3,"stop":["i"],"stop":null}', raw=True))
