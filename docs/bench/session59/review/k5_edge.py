# `reach` at float32's edge: p within a few ulps of the mass of the first 256 candidates, a tail
# of tokens each far lighter than an ulp of that mass. Counts rows the new routing sends past a
# tier that holds them (same set, k3; a costlier pass), and checks the set against the old route.
import sys
import torch
sys.path.insert(0, "/tmp/s59/review")
import old_truncation as old
from roseinfer.layers.truncation import truncate, truncate_in_tiers, CandidateOps, CANDIDATE_TIERS, expand
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
ops = CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows)
ops_old = old.CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows)
V = 49152
TIERS = (*CANDIDATE_TIERS, V)
g = torch.Generator().manual_seed(5)
over = n = diffs = 0
examples = []
seen = []
for gap in (14.0, 18.0, 22.0, 26.0):          # tail logit below the head's: q ~ e^-gap / 256
    for second in (2.0, 4.0, 8.0):
        x = torch.full((V,), -gap - 40.0)         # the far tail: nothing
        x[:256] = torch.randn(256, generator=g) * 0.01
        x[256:3256] = -gap + torch.randn(3000, generator=g) * 1e-3  # 3,000 light tokens (no ties)
        x[3256:9256] = -gap - second + torch.randn(6000, generator=g) * 1e-3  # 6,000 lighter
        x = x[torch.randperm(V, generator=g)]
        t = truncate(x[None], None, torch.tensor([1.0]), ops, 256)
        probs = (t.values - kt.logsumexp_rows(x[None]).unsqueeze(1)).exp()
        mass = float(probs.cumsum(-1)[0, -1])
        p = torch.tensor(mass)
        for step in range(-3, 12):
            pf = float(torch.nextafter(p, torch.tensor(1.0 if step > 0 else 0.0))) if step else mass
            q = p.clone()
            for _ in range(abs(step)):
                q = torch.nextafter(q, torch.tensor(1.0 if step > 0 else 0.0))
            pf = float(q)
            if not 0 < pf < 1: continue
            tiers = truncate_in_tiers(x[None], None, torch.tensor([pf]), ops)
            got = tiers[-1][1].values.shape[1]
            want = next(c for c in TIERS if bool(truncate(x[None], None, torch.tensor([pf]), ops, c).inside[0]))
            oldt = old.truncate_in_tiers(x[None], None, torch.tensor([pf]), ops_old)
            diffs += not torch.equal(expand(x[None], tiers), old.expand(x[None], oldt))
            n += 1
            seen.append((gap, second, step, want, got))
            if got > want:
                over += 1
                examples.append((gap, second, step, want, got, [round(r, 1) for _, tt in tiers for r in tt.reach.tolist()]))
print(f"rows {n}: sent past a tier that holds them {over}; sets differing from the old route {diffs}")
import collections
for e in examples[:10]: print("  gap, second, ulps of p past the mass, first tier inside, tier sent to, reaches:", e)
import collections
print(collections.Counter((w, g) for *_, w, g in seen))
print([s for s in seen if s[0] == 14.0][:15])
