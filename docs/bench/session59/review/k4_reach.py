# Is `reach` a lower bound in float32? For top-p rows (no k): the first tier at which the row
# alone is `inside`, against the tier the new routing sends it to. A row sent past a tier where it
# fits gets the same set (k3) but pays the larger pass (the vocabulary's sort, ~3 ms a row).
import sys, random
import torch
from roseinfer.layers.truncation import truncate, truncate_in_tiers, CandidateOps, CANDIDATE_TIERS
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
ops = CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows)
V = 49152
TIERS = (*CANDIDATE_TIERS, V)
rnd = random.Random(1); g = torch.Generator().manual_seed(1)
def first_inside(x, p):
    for c in TIERS:
        if bool(truncate(x[None], None, torch.tensor([p]), ops, c).inside[0]): return c
def rows():
    for _ in range(int(sys.argv[1])):
        kind = rnd.choice(["head", "planted", "random"])
        p = rnd.choice([0.9, 0.95, 0.99, 0.999999, 0.99999994])
        if kind == "head":  # a head of h tokens holding nearly all the mass, a long tiny tail
            h = rnd.choice([200, 256, 300, 900, 1024, 1100, 4000])
            x = torch.randn(V, generator=g) * rnd.choice([0.01, 0.5]) - rnd.uniform(10, 30)
            x[:h] = torch.randn(h, generator=g) * 0.01
            x = x[torch.randperm(V, generator=g)]
        elif kind == "planted":
            w = rnd.choice([300, 1000, 1023, 3000, 4095])
            x = torch.randn(V, generator=g) * 0.1 - rnd.uniform(8, 16)
            x[torch.randperm(V, generator=g)[:w]] += 12.0
        else:
            x = torch.randn(V, generator=g) * rnd.uniform(0.5, 4)
        yield kind, p, x
over = under = n = 0
worst = []
for kind, p, x in rows():
    tiers = truncate_in_tiers(x[None], None, torch.tensor([p]), ops)
    got = tiers[-1][1].values.shape[1]
    want = first_inside(x, p)
    n += 1
    if got > want:
        over += 1
        t0 = truncate(x[None], None, torch.tensor([p]), ops, 256)
        worst.append((kind, p, want, got, [t.reach.tolist() for _, t in tiers]))
    under += len(tiers) > 1 + TIERS.index(want) - sum(1 for c in TIERS if c < want and False)
print(f"rows {n}: routed past the first tier that holds them {over}")
for w in worst[:8]: print("  ", w)
