from h import *
M=[{"role":"user","content":"Write a short poem about the sea."}]
b={"messages":M,"n":1,"seed":5,"temperature":1,"max_tokens":20,"logprobs":True,"top_logprobs":3,"stop":[" the"," sea"]}
s,j=chat(dict(b)); print(json.dumps(j["choices"][0]["logprobs"]))
s,ch=stream("/v1/chat/completions",dict(b))
for c in ch: print(json.dumps(c)[:700])
