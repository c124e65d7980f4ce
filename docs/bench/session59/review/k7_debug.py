# one edge row: p one ulp past the 256-candidate mass; where is it inside, and why not at 1,024?
import torch
from roseinfer.layers.truncation import truncate, CandidateOps
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
ops = CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows)
V = 49152
g = torch.Generator().manual_seed(5)
gap, second = 14.0, 2.0
x = torch.full((V,), -gap - 40.0)
x[:256] = torch.randn(256, generator=g) * 0.01
x[256:3256] = -gap
x[3256:9256] = -gap - second
x = x[torch.randperm(V, generator=g)]
t = truncate(x[None], None, torch.tensor([1.0]), ops, 256)
total = kt.logsumexp_rows(x[None])
probs = (t.values - total.unsqueeze(1)).exp()
mass = probs.cumsum(-1)[0, -1]
p = float(torch.nextafter(mass, torch.tensor(1.0)))
print("mass", float(mass), "p", p, "total", float(total))
for c in (256, 1024, 4096):
    tt = truncate(x[None], None, torch.tensor([p]), ops, c)
    kept = int(tt.values.isfinite().sum())
    print(c, "inside", bool(tt.inside[0]), "kept", kept, "reach", float(tt.reach[0]))
