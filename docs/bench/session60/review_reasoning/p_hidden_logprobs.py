# include_reasoning: false hides `reasoning`, but logprobs still carry every thinking token
# (non-stream logprobs.content, and streamed chunks of logprobs alone); reasoning_format
# "deepseek-legacy" (llama.cpp) refused; chat usage has no reasoning_tokens (Responses has).
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
with client("deepseek_r1") as h:
    body = base(h, 9, include_reasoning=False, logprobs=True)
    m = h.post("/v1/chat/completions", json=body).json()
    c = m["choices"][0]
    print("message:", c["message"])
    print("logprobs tokens:", [t["token"] for t in c["logprobs"]["content"]])
    ev = sse(h.post("/v1/chat/completions", json={**body, "stream": True}).text)
    print("stream chunks (delta, logprob tokens):", [(e["choices"][0]["delta"], [t["token"] for t in (e["choices"][0].get("logprobs") or {}).get("content") or []]) for e in ev][:5])
    print("usage (chat):", m["usage"])
    r = h.post("/v1/chat/completions", json=base(h, 9, reasoning_format="deepseek-legacy"))
    print("reasoning_format deepseek-legacy:", r.status_code, r.text[:160])
