from h import *
import math
s, j, _ = comp(logprobs=2, max_tokens=3); print("comp logprobs 2", s, short(j["choices"][0], 900))
s, j, _ = comp(logprobs=0, max_tokens=2); print("comp logprobs 0", s, short(j["choices"][0]["logprobs"], 600))
s, j, _ = comp(logprobs=21, max_tokens=2); show("logprobs 21", (s, j, 0))
s, j, _ = comp(logprobs=True, max_tokens=2); show("comp logprobs true", (s, j, 0))
s, j, _ = comp(echo=True, max_tokens=2); print("echo", s, short(j["choices"][0], 500), j["usage"])
s, j, _ = comp(echo=True, logprobs=1, max_tokens=2); print("echo+logprobs", s, short(j["choices"][0], 1200))
s, j, _ = comp(echo=True, max_tokens=2, prompt=[[1, 2, 3], "hi"]); print("echo list", s, short(j, 800))
s, j, _ = chat(logprobs=True, top_logprobs=2, max_tokens=2); print("chat logprobs", s, short(j["choices"][0], 1200))
s, j, _ = chat(logprobs=True, max_tokens=2); print("chat logprobs no top", s, short(j["choices"][0]["logprobs"], 600))
s, j, _ = chat(top_logprobs=2, max_tokens=2); show("chat top_logprobs without logprobs", (s, j, 0))
s, j, _ = chat(logprobs=False, top_logprobs=2, max_tokens=2); show("chat top_logprobs + logprobs false", (s, j, 0))
s, j, _ = chat(logprobs=True, top_logprobs=21, max_tokens=2); show("chat top_logprobs 21", (s, j, 0))
s, j, _ = chat(logprobs=3, max_tokens=2); show("chat logprobs 3 (int)", (s, j, 0))
s, j, _ = chat({"prompt_logprobs": 1}, max_tokens=2); print("chat prompt_logprobs", s, short(j.get("prompt_logprobs"), 400), "keys", list(j))
s, j, _ = comp({"prompt_logprobs": 1}, max_tokens=2); print("comp prompt_logprobs", s, short(j["choices"][0], 600))
s, j, _ = comp({"prompt_logprobs": 1}, max_tokens=2, stream=True); show("comp prompt_logprobs stream", (s, j, 0))
# logprob of generated token under greedy should be max
s, j, _ = chat(logprobs=True, top_logprobs=3, max_tokens=4)
for c in j["choices"][0]["logprobs"]["content"]:
    print("  tok", repr(c["token"]), round(c["logprob"], 3), [ (t["token"], round(t["logprob"],3)) for t in c["top_logprobs"]], "bytes" in c, c.get("bytes"))
