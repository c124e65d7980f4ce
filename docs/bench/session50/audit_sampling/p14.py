from h import *
import json
CH="/v1/chat/completions"; CO="/v1/completions"
P="The capital of France is"
s,j=post(CO,{"prompt":P,"max_tokens":8,"temperature":0,"stop":"Paris","logprobs":1}); print("stop+lp:", j["choices"][0]["text"].__repr__(), j["choices"][0]["logprobs"]["tokens"])
s,evs=stream(CO,{"prompt":P,"max_tokens":8,"temperature":0,"stop":"Paris","logprobs":1,"stream":True}); print("  stream:", [c["logprobs"]["tokens"] if c.get("logprobs") else None for e in evs if e!="[DONE]" for c in e["choices"]])
s,j=post(CO,{"prompt":P,"max_tokens":8,"temperature":0,"stop":".\n\nThe","logprobs":1}); print("stop2+lp:", repr(j["choices"][0]["text"]), j["choices"][0]["logprobs"]["tokens"], j["usage"])
s,evs=stream(CO,{"prompt":P,"max_tokens":8,"temperature":0,"stop":".\n\nThe","logprobs":1,"stream":True,"stream_options":{"include_usage":True}}); print("  stream:", [c["logprobs"]["tokens"] if c.get("logprobs") else None for e in evs if e!="[DONE]" for c in e["choices"]], evs[-2].get("usage"))
M=[{"role":"user","content":"Say hi."}]
show("ignore_eos+stop_token_ids[2]", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"ignore_eos":True,"stop_token_ids":[2]}))
show("min_tokens 25", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":25}))
s=stext(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":25,"stream":True}); print("   stream", s[1], s[2])
show("min_tokens 25 stop_token_ids", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":25,"stop_token_ids":[2]}))
show("truncate chat 5", post(CH,{"messages":M,"max_tokens":5,"temperature":0,"truncate_prompt_tokens":5}))
show("truncate co 2", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"truncate_prompt_tokens":2}))
show("truncate co -1", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"truncate_prompt_tokens":-1}))
show("truncate co -2", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"truncate_prompt_tokens":-2}))
s,j=post(CO,{"prompt":P,"max_tokens":2,"request_id":"abc"}); print("request_id", j["id"])
s,j=post(CO,{"prompt":P,"max_tokens":2,"request_id":""}); show("request_id ''",(s,j))
show("bad_words Paris", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"bad_words":["Paris"]}))
show("allowed", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"allowed_token_ids":[7042,30]}))
show("allowed+bias", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"allowed_token_ids":[7042,30],"logit_bias":{"30":100}}))
show("allowed []", post(CO,{"prompt":P,"max_tokens":5,"temperature":0,"allowed_token_ids":[]}))
for rf in [{"type":"text"},{"type":"json_object"},{"type":"json_schema"},{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}}},{"type":"bogus"},{"type":"text","json_schema":{"name":"x"}},{"type":"json_schema","json_schema":{"name":"x"}}]:
    show("rf "+json.dumps(rf)[:70], post(CH,{"messages":[{"role":"user","content":"Give JSON"}],"max_tokens":15,"temperature":0,"response_format":rf}))
b={"messages":[{"role":"user","content":"Give JSON"}],"max_tokens":20,"temperature":0.7,"seed":1,"response_format":{"type":"json_object"}}
a=ctext(CH,b); s=stext(CH,{**b,"stream":True}); print("json_object stream==non:", a[1]==s[1], a[1])
