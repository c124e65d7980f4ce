"""Time single requests alone (no other load from us): per-request cost of a field."""
import json, sys, time, httpx
from h import BASE
def base(mt, **kw):
    b = {"prompt": "Hello there, how are", "max_tokens": mt, "temperature": 0.7, "seed": 1, "ignore_eos": True}
    b.update(kw); return b
V = 49152
CASES = {
  "plain": base(40),
  "plain_1tok": base(1),
  "topk_vocab": base(40, top_k=V),
  "topk_vocab_1tok": base(1, top_k=V),
  "topk_vocab_p": base(40, top_k=V, top_p=0.999999),
  "topp_only": base(40, top_p=0.999999),
  "topk_1000": base(40, top_k=1000),
  "topk_10000": base(40, top_k=10000),
  "allowed_all": base(40, allowed_token_ids=list(range(V))),
  "allowed_all_1tok": base(1, allowed_token_ids=list(range(V))),
  "bias_all": base(40, logit_bias={str(i): 0.01 for i in range(V)}),
  "bias_all_1tok": base(1, logit_bias={str(i): 0.01 for i in range(V)}),
}
names = sys.argv[1:] or list(CASES)
with httpx.Client(timeout=600) as c:
    for name in names:
        ts = []
        for _ in range(2):
            t = time.perf_counter()
            r = c.post(BASE + "/v1/completions", json=CASES[name])
            ts.append(time.perf_counter() - t)
        print(f"{name:18s} {r.status_code} " + " ".join(f"{x:.2f}s" for x in ts), flush=True)
