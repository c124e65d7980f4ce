from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
raws = [
 '{"prompt":"Hi","max_tokens":3,"temperature":NaN}',
 '{"prompt":"Hi","max_tokens":3,"temperature":Infinity}',
 '{"prompt":"Hi","max_tokens":3,"top_p":NaN}',
 '{"prompt":"Hi","max_tokens":3,"logit_bias":{"12":NaN}}',
 '{"prompt":"Hi","max_tokens":3,"logit_bias":{"12":-Infinity}}',
 '{"prompt":"Hi","max_tokens":3,"presence_penalty":NaN}',
 '{"prompt":"Hi","max_tokens":3,"repetition_penalty":Infinity}',
 '{"prompt":"Hi","max_tokens":3,"min_p":NaN}',
 '{"prompt":"Hi","max_tokens":3,"length_penalty":NaN}',
 '{"prompt":"Hi","max_tokens":3,"typical_p":NaN}',
 '{"prompt":"Hi","max_tokens":3,"seed":1e400}',
 '{"prompt":"Hi","max_tokens":3,"temperature":1e400}',
 '{"prompt":"Hi","max_tokens":3,"seed":184467440737095516160}',
 '{"prompt":"Hi","max_tokens":3,"seed":-2}',
 '{"prompt":"Hi","max_tokens":3,"seed":18446744073709551615}',
 '{"prompt":"Hi","max_tokens":3,"seed":-9223372036854775808}',
 '{"prompt":"Hi","max_tokens":3,"max_tokens":5,"temperature":0}',
 '{"prompt":"Hi","max_tokens":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"n":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"stop_token_ids":[99999999999999999999999]}',
 '{"prompt":"Hi","max_tokens":3,"logprobs":99999999999999999999999}',
 '{"prompt":[99999999999999999999999],"max_tokens":3}',
 '{"prompt":[-1],"max_tokens":3}',
 '{"prompt":[49152],"max_tokens":3}',
 '{"prompt":"Hi","max_tokens":3,"min_tokens":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"truncate_prompt_tokens":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"truncate_prompt_tokens":0}',
 '{"prompt":"Hi","max_tokens":3,"allowed_token_ids":[99999999999999999999999]}',
 '{"prompt":"Hi","max_tokens":3,"id_slot":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"n_keep":1e400}',
 '{"prompt":"Hi","max_tokens":3,"prompt_logprobs":99999999999999999999999}',
 '{"prompt":"Hi","max_tokens":3,"priority":-0.0}',
 '{"prompt":"Hi","max_tokens":3,"top_n_sigma":-Infinity}',
 '{"prompt":"Hi","max_tokens":3,"t_max_predict_ms":-Infinity}',
 '{"prompt":"Hi","max_tokens":3,"mirostat_tau":Infinity}',
]
for r in raws:
    show(r[:80], post(CO, r.encode(), raw=True))
for b in [b'{"prompt":"Hi\xff","max_tokens":3}', b'{"prompt":"Hi\\ud800","max_tokens":3}', b'{"prompt":"Hi","max_tokens":3,"user":"\xc3\x28"}']:
    show(repr(b[:40]), post(CO, b, raw=True))
