from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
cases=[
 ("co emoji", CO, {"prompt":"Emoji list: 😀😃😄 🎉🎊 and Chinese 你好世界, Japanese こんにちは,","max_tokens":40,"temperature":1.0,"seed":3}),
 ("co emoji stop", CO, {"prompt":"Emoji list: 😀😃😄 🎉🎊 and Chinese 你好世界, Japanese こんにちは,","max_tokens":40,"temperature":1.0,"seed":3,"stop":["😀","你"]}),
 ("chat zh", CH, {"messages":[{"role":"user","content":"用中文写一首关于海的诗，加上表情符号🌊"}],"max_tokens":40,"temperature":0.8,"seed":5}),
 ("co bytes", CO, {"prompt":"\u00e9\u00e8\u00ea \u2603 \U0001F600","max_tokens":30,"temperature":1.5,"seed":11}),
]
for tag,ep,b in cases:
    a=post(ep,b); s=stext(ep,{**b,"stream":True})
    t=[(c.get("text") if "text" in c else c["message"]["content"]) for c in a[1]["choices"]]
    print(tag, "equal:", t==s[1], a[1]["choices"][0]["finish_reason"], s[2]); print("  ", repr(t[0][:120])); 
    if t!=s[1]: print("  S", repr(s[1][0][:120]))
    # any chunk with replacement char?
    bad=[e for e in s[3] if e!="[DONE]" and any("\ufffd" in ((c.get("text") if "text" in c else (c["delta"].get("content") or "")) or "") for c in e.get("choices",[]))]
    print("   chunks with U+FFFD:", len(bad), " final has FFFD:", "\ufffd" in t[0])
