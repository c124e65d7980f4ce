# Stream vs non-stream vs parse(unparsed text) over stop strings, stream_interval, n, logprobs,
# include_usage, max_tokens; prints every disagreement.
import sys, itertools; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
cases = [
    {}, {"stop": ["aa"]}, {"stop": [" b"]}, {"stop": ["</think>"]}, {"stop": ["<think>"]},
    {"stop": ["k>"]}, {"stop": ["aa"], "include_stop_str_in_output": True},
    {"stop": ["</think>"], "include_stop_str_in_output": True},
    {"stream_interval": 3}, {"stream_interval": 2, "stop": ["a b"]},
    {"n": 3}, {"n": 2, "stream_interval": 4},
    {"logprobs": True, "top_logprobs": 1}, {"max_tokens": 1}, {"max_tokens": 3},
]
bad = 0
for name in URL:
    with client(name) as h:
        for extra, seed in itertools.product(cases, range(10)):
            n = extra.get("n", 1)
            ref = h.post("/v1/chat/completions", json=base(h, seed, reasoning_format="none", **extra)).json()
            ns = h.post("/v1/chat/completions", json=base(h, seed, **extra))
            st = h.post("/v1/chat/completions", json=base(h, seed, stream=True,
                        stream_options={"include_usage": True}, **extra))
            if ns.status_code != 200 or st.status_code != 200:
                print("HTTP", name, seed, extra, ns.status_code, st.status_code, ns.text[:200]); bad += 1; continue
            ev = sse(st.text)
            for i in range(n):
                whole = ref["choices"][i]["message"]["content"] or ""
                want_r, want_a = parse(name, whole)
                m = ns.json()["choices"][i]
                got = (m["message"].get("reasoning"), m["message"]["content"])
                j = join_chat(ev, i)
                sgot = (j.get("reasoning"), j.get("content"))
                want = (want_r, want_a or None)
                if got != want or sgot != (want_r or None, want_a or None) or m["finish_reason"] != j.get("finish_reason"):
                    bad += 1
                    print("DIFF", name, seed, extra, i, "unparsed=", repr(whole), "want=", want, "nonstream=", got, m["finish_reason"], "stream=", sgot, j.get("finish_reason"))
            u1, u2 = ns.json()["usage"], ev[-1].get("usage")
            if u1 != u2:
                bad += 1; print("USAGE", name, seed, extra, u1, u2)
print("disagreements:", bad)
print("usage sample:", ns.json()["usage"])
