from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
b={"messages":[{"role":"user","content":"Reply with only emoji: 🌊🐟🐠🐳"}],"max_tokens":20,"temperature":0,"logprobs":True,"top_logprobs":1}
s,j=post(CH,b); c=j["choices"][0]
lp=c["logprobs"]["content"]
for x in lp[:6]: print(x["token"], x["bytes"], [(t["token"],t["bytes"]) for t in x["top_logprobs"]])
print(repr(c["message"]["content"]).encode())
print(list(c["message"]["content"].encode()))
s2=stext(CH,{**b,"stream":True}); print("stream==non:", s2[1][0]==c["message"]["content"], repr(s2[1][0]))
