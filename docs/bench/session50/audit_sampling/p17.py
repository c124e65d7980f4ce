from h import *
import json
CO="/v1/completions"; CH="/v1/chat/completions"
s,j=post(CO,{"prompt":"The capital of France","max_tokens":1,"temperature":0,"echo":True,"prompt_logprobs":1,"logprobs":3})
c=j["choices"][0]; print(json.dumps(c["prompt_logprobs"])[:400]); print(json.dumps(c["logprobs"]["top_logprobs"][:3]))
s,j=post(CO,{"prompt":"The capital of France","max_tokens":1,"temperature":0,"prompt_logprobs":0})
print(json.dumps(j["choices"][0]["prompt_logprobs"])[:300])
s,j=post(CH,{"messages":[{"role":"user","content":"Hi"}],"max_tokens":1,"temperature":0,"prompt_logprobs":1})
print(list(j.keys()), json.dumps(j.get("prompt_logprobs"))[:200], j["choices"][0].keys())
