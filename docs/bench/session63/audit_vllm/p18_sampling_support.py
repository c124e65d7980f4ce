"""Sampling filters have their effect: n=64 one-token samples at temperature 2; the set of first tokens must shrink
to what top_k / top_p / min_p allow. Same on both servers (RNGs differ, so compare sets, not texts)."""
import json
from common import post, MODEL
B = {"model": MODEL, "prompt": "My favourite colour is", "max_tokens": 1, "temperature": 2.0, "n": 64, "seed": 1}
for label, extra in [("none", {}), ("top_k 2", {"top_k": 2}), ("top_p 0.3", {"top_p": 0.3}), ("min_p 0.3", {"min_p": 0.3}),
                     ("top_k 3 + temperature 0.5", {"top_k": 3, "temperature": 0.5}), ("presence_penalty (1 tok: no effect)", {"presence_penalty": 2}),
                     ("logit_bias +100 ' red'", {"logit_bias": {"2180": 100}})]:
    row = {}
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/completions", {**B, **extra})
        row[s] = sorted({c["text"] for c in j["choices"]}) if st == 200 else (st, j)
    print(f"=== {label}: vllm {len(row['vllm'])} distinct, rose {len(row['rose'])} distinct")
    print(f"   vllm: {json.dumps(row['vllm'])[:300]}\n   rose: {json.dumps(row['rose'])[:300]}")
