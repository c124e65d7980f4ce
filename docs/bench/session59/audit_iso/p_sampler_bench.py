"""In-process: the sampler's per-step cost for one row / 32 rows with a given field (tiny logits
drawn to be flat like a random model's, and peaked like a trained model's)."""
import sys, time, torch
sys.path.insert(0, "/tmp/s59/audit_iso/wt")
from roseinfer.layers.sampler import Sampler
from roseinfer.sampling_params import SamplingParams
from roseinfer.layers.masks import RowState
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
V = 49152
s = Sampler("cpu", 0, [0, 2])
def run(name, kw, B, flat):
    g = torch.Generator().manual_seed(0)
    base = torch.randn(B, V, generator=g) * (0.3 if flat else 4.0)
    params = [SamplingParams(max_tokens=50, seed=i, **kw) for i in range(B)]
    states = [s.new_row_state(p) for p in params]
    ts = []
    for _ in range(6):
        logits = base.clone()
        t = time.perf_counter(); s(logits, params, states, [5] * B, None); ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"{name:28s} B={B:3d} {'flat' if flat else 'peak'}  median {ts[3]*1000:8.2f} ms/step", flush=True)
CASES = [
  ("T0.7", dict(temperature=0.7)),
  ("T0.7 top_p .95", dict(temperature=0.7, top_p=0.95)),
  ("T0.7 top_p .999999", dict(temperature=0.7, top_p=0.999999)),
  ("T0.7 top_k V", dict(temperature=0.7, top_k=V)),
  ("T0.7 top_k V-1", dict(temperature=0.7, top_k=V-1)),
  ("T0.7 top_k 20000 p .9999", dict(temperature=0.7, top_k=20000, top_p=0.9999)),
  ("T0.7 allowed all", dict(temperature=0.7, allowed_token_ids=list(range(V)))),
  ("T0.7 bias all", dict(temperature=0.7, logit_bias={i: 0.01 for i in range(V)})),
  ("greedy allowed all", dict(temperature=0, allowed_token_ids=list(range(V)))),
  ("greedy", dict(temperature=0)),
]
for B in (1, 32):
    for flat in (True, False):
        for name, kw in CASES:
            run(name, kw, B, flat)
