from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
b={"messages":[{"role":"user","content":"Reply with only emoji: 🌊🐟🐠🐳"}],"max_tokens":20,"temperature":0,"logprobs":True,"top_logprobs":1}
s,j=post(CH,b); c=j["choices"][0]
content=c["message"]["content"]; lp=c["logprobs"]["content"]
print(repr(content)); print([x["token"] for x in lp][:20])
allb=b"".join(bytes(x["bytes"]) for x in lp)
print("bytes concat == content utf8:", allb==content.encode())
b2={"prompt":"Emoji: 🌊🐟🐠🐳 Chinese: 你好","max_tokens":10,"temperature":0,"logprobs":1,"echo":True}
s,j=post(CO,b2); c=j["choices"][0]; L=c["logprobs"]
print(repr(c["text"])); print(L["tokens"]); print(L["text_offset"])
print("tokens concat == text:", "".join(L["tokens"])==c["text"])
# text_offset consistent with text?
ok=all(c["text"][o:].startswith(t) for o,t in zip(L["text_offset"],L["tokens"]) if "\ufffd" not in t and not t.startswith("bytes:"))
print("offsets consistent:", ok)
