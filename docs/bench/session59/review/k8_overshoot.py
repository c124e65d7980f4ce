# the row k5 found: reach 1,254.8 at the 256 tier, yet the row is inside 1,024 candidates
import torch
from roseinfer.layers.truncation import truncate, CandidateOps
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
ops = CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows)
V = 49152
g = torch.Generator().manual_seed(5)
for gap in (14.0, 18.0):          # k5's loop, replayed to the same generator state
    for second in (2.0, 4.0, 8.0):
        x = torch.full((V,), -gap - 40.0)
        x[:256] = torch.randn(256, generator=g) * 0.01
        x[256:3256] = -gap + torch.randn(3000, generator=g) * 1e-3
        x[3256:9256] = -gap - second + torch.randn(6000, generator=g) * 1e-3
        x = x[torch.randperm(V, generator=g)]
        if (gap, second) == (18.0, 2.0): break
    else: continue
    break
total = kt.logsumexp_rows(x[None])
vals, ids = ops.likeliest(x[None], 1025)
probs = (vals - total.unsqueeze(1)).exp().double()
p = float(torch.nextafter(torch.tensor(float(probs[0, :256].float().cumsum(0)[-1])), torch.tensor(1.0)))
t256 = truncate(x[None], None, torch.tensor([p]), ops, 256)
t1024 = truncate(x[None], None, torch.tensor([p]), ops, 1024)
print(f"p {p!r}  reach at 256: {float(t256.reach[0]):.1f}  (lacking / weight of the 257th)")
print(f"at 1024: inside {bool(t1024.inside[0])}, kept {int(t1024.values.isfinite().sum())}")
print(f"exact mass of 256 (double) {float(probs[0, :256].sum())!r}; ulp at p {float(torch.tensor(p).nextafter(torch.tensor(2.0)) - p):.2e};"
      f" 257th weight {float(probs[0, 256]):.2e}")
