"""In-process: sampler step at B=128 (one n=128 request) with top_p 0.999 vs plain, 1 and 2 threads."""
import sys, time, torch
sys.path.insert(0, "/tmp/s59/audit_iso/wt")
from roseinfer.layers.sampler import Sampler
from roseinfer.sampling_params import SamplingParams
V = 49152; s = Sampler("cpu", 0, [0, 2])
for th in (1, 2):
    torch.set_num_threads(th)
    for name, kw in (("T0.7", dict(temperature=0.7)), ("T0.7 top_p .999", dict(temperature=0.7, top_p=0.999)),
                     ("T1.5 top_p .95 (peaked logits)", dict(temperature=1.5, top_p=0.95))):
        base = torch.randn(128, V, generator=torch.Generator().manual_seed(0)) * (0.3 if "peaked" not in name else 4.0)
        params = [SamplingParams(max_tokens=50, seed=i, **kw) for i in range(128)]
        states = [s.new_row_state(p) for p in params]
        ts = []
        for _ in range(3):
            l = base.clone(); t = time.perf_counter(); s(l, params, states, [5] * 128, None); ts.append(time.perf_counter() - t)
        print(f"threads={th} B=128 {name:32s} {min(ts)*1000:8.1f} ms/step", flush=True)
