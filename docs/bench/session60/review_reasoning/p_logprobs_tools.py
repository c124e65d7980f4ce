# Chat logprobs with reasoning (stream vs non-stream, vs unparsed), tools "auto" while thinking,
# usage fields.
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
for name in URL:
    with client(name) as h:
        for seed in (2, 9, 11):
            for extra in ({"logprobs": True, "top_logprobs": 1},
                          {"tools": TOOLS, "tool_choice": "auto"},
                          {"tools": TOOLS, "tool_choice": "auto", "logprobs": True, "stream_interval": 3}):
                ref = h.post("/v1/chat/completions", json=base(h, seed, reasoning_format="none", **extra)).json()["choices"][0]
                ns = h.post("/v1/chat/completions", json=base(h, seed, **extra))
                st = h.post("/v1/chat/completions", json=base(h, seed, stream=True, **extra))
                assert ns.status_code == 200 and st.status_code == 200, (ns.text, st.text[:300])
                ns = ns.json()["choices"][0]; ev = sse(st.text)
                lp_ref = [t["token"] for t in (ref.get("logprobs") or {}).get("content") or []]
                lp_ns = [t["token"] for t in (ns.get("logprobs") or {}).get("content") or []]
                lp_st = [t["token"] for e in ev for c in e["choices"] if c.get("logprobs") for t in c["logprobs"]["content"]]
                j = join_chat(ev)
                print(name, seed, list(extra), "| unparsed:", repr(ref["message"]["content"]),
                      "| ns:", (ns["message"].get("reasoning"), ns["message"]["content"], ns["message"].get("tool_calls"), ns["finish_reason"]),
                      "| st:", (j.get("reasoning"), j.get("content"), j.get("finish_reason")), "| first delta:", ev[0]["choices"][0]["delta"])
                if "logprobs" in extra:
                    print("   logprob tokens ref==ns:", lp_ref == lp_ns, "ns==st:", lp_ns == lp_st, len(lp_ref), len(lp_ns), len(lp_st))
