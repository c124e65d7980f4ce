# LOW: stream vs non-stream disagree where the answer is empty: (a) deepseek_r1, output just
# '</think>' (an empty thinking block): non-stream reasoning "" and content null; the stream has
# no reasoning delta and opens with content "" (README: null where the answer thinks first);
# (b) an answer cut to nothing by a stop string: non-stream content null, stream content "".
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
with client("deepseek_r1") as h:
    for extra in ({"seed": 0, "max_tokens": 1}, {"seed": 0, "stop": ["</think>"]}):
        body = base(h, **extra) if False else base(h, extra["seed"], **{k: v for k, v in extra.items() if k != "seed"})
        raw = h.post("/v1/chat/completions", json={**body, "reasoning_format": "none"}).json()["choices"][0]["message"]["content"]
        ns = h.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
        ev = sse(h.post("/v1/chat/completions", json={**body, "stream": True}).text)
        print(extra, "output", repr(raw))
        print("   non-stream:", {k: ns.get(k) for k in ("content", "reasoning")})
        print("   stream deltas:", [e["choices"][0]["delta"] for e in ev if e["choices"]])
