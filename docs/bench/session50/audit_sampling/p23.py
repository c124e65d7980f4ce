from h import *
import json
CO="/v1/completions"; CH="/v1/chat/completions"
s,j=post(CO,{"prompt":"The capital of France is","max_tokens":2,"temperature":0,"logprobs":0}); print(json.dumps(j["choices"][0]["logprobs"]))
s,j=post(CO,{"prompt":"The capital of France is","max_tokens":2,"temperature":0.0001,"logprobs":1,"logit_bias":{"7042":-100}}); print(json.dumps(j["choices"][0]["logprobs"]))
# sampled token with rank beyond top-N: is it included in top_logprobs?
s,j=post(CO,{"prompt":"The capital of France is","max_tokens":2,"temperature":0,"logprobs":1,"logit_bias":{"7042":-100, "260":-100}}); print(json.dumps(j["choices"][0]["logprobs"]))
s,j=post(CH,{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2,"temperature":0,"logprobs":True,"top_logprobs":1,"logit_bias":{"19556":-100}}); print(json.dumps(j["choices"][0]["logprobs"])[:600])
