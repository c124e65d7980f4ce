# old routing (truncation.py at 4f8357f: one tier after another) against the new (straight to
# the first tier >= reach): expand()'s masked logits bit for bit, each truncated row inside
# exactly one tier, tier rows sorted; torch's passes and the kernels'.
import sys, random
import torch
sys.path.insert(0, "/tmp/s59/review")
import old_truncation as old
from roseinfer.layers import truncation as new
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
OPS = {"torch": (old.CandidateOps(), new.CandidateOps()),
       "kernels": (old.CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows),
                   new.CandidateOps(kt.top_candidates_rows, kt.logsumexp_rows, kt.sample_candidates_rows))}
V = 49152
g = torch.Generator().manual_seed(59)
rnd = random.Random(59)
def row(kind):
    if kind == "random": return torch.randn(V, generator=g) * rnd.choice([0.3, 1, 3, 8])
    if kind == "flat": return torch.randn(V, generator=g) * 0.01
    if kind == "peaked": x = torch.randn(V, generator=g); x[rnd.randrange(V)] += 30; return x
    if kind == "tied": return torch.randint(0, 4, (V,), generator=g).float() * rnd.choice([0.5, 3.0])
    if kind == "planted":  # a set of `width` tokens far above the rest (the test's rows 6, 7)
        w = rnd.choice([255, 256, 257, 300, 1000, 1023, 1024, 1025, 3000, 4095, 4096, 4097, 9000])
        x = torch.randn(V, generator=g) * 0.1 - 12.0
        x[torch.randperm(V, generator=g)[:w]] += 12.0; return x
    if kind == "fewfinite":
        x = torch.full((V,), float("-inf")); n = rnd.choice([3, 256, 257, 1024, 1025, 4000])
        x[torch.randperm(V, generator=g)[:n]] = torch.randn(n, generator=g) * 0.05; return x
    if kind == "nan": x = torch.randn(V, generator=g); x[rnd.randrange(V)] = float("nan"); return x
    if kind == "neginf": return torch.full((V,), float("-inf"))
    if kind == "posinf": x = torch.randn(V, generator=g); x[rnd.randrange(V)] = float("inf"); return x
KINDS = ["random", "flat", "peaked", "tied", "planted", "fewfinite", "nan", "neginf", "posinf"]
KS = [0, 0, 0, 1, 40, 300, 2000, 5000, 20000, V - 1, V]
PS = [1.0, 1.0, 0.5, 0.9, 0.95, 0.999999, 0.99999994, 1e-9]
def bits(t): return t.contiguous().view(torch.int32)
diffs = dup = lost = unsorted = batches = skipped_rows = 0
for b in range(int(sys.argv[1]) if len(sys.argv) > 1 else 14):
    B = rnd.choice([1, 4, 9, 16])
    kinds = [rnd.choice(KINDS) for _ in range(B)]
    logits = torch.stack([row(k) for k in kinds])
    mode = b % 3  # 0: k and p, 1: p only, 2: k only
    top_k = None if mode == 1 else torch.tensor([rnd.choice(KS) for _ in range(B)])
    top_p = None if mode == 2 else torch.tensor([rnd.choice(PS) for _ in range(B)])
    for name, (o_ops, n_ops) in OPS.items():
        ot = old.truncate_in_tiers(logits, top_k, top_p, o_ops)
        nt = new.truncate_in_tiers(logits, top_k, top_p, n_ops)
        eo, en = old.expand(logits, ot), new.expand(logits, nt)
        if not torch.equal(bits(eo), bits(en)):
            diffs += 1
            bad = (bits(eo) != bits(en)).any(1).nonzero().squeeze(1).tolist()
            print("DIFF", name, b, [(r, kinds[r]) for r in bad])
        # each truncated row inside exactly one tier; rows sorted in each tier
        count = {}
        for rows, t in nt:
            unsorted += rows != sorted(rows)
            for j, r in enumerate(rows):
                if t.inside[j]: count[r] = count.get(r, 0) + 1
        truncated = [r for r in range(B) if (top_k is not None and 0 < int(top_k[r]) < V)
                     or (top_p is not None and float(top_p[r]) < 1)]
        lost += sum(count.get(r, 0) == 0 for r in truncated)
        dup += sum(c > 1 for c in count.values())
        old_route = {r: [t.values.shape[1] for rows, t in ot if r in rows] for r in range(B)}
        new_route = {r: [t.values.shape[1] for rows, t in nt if r in rows] for r in range(B)}
        skipped_rows += sum(old_route[r] != new_route[r] for r in range(B))
    batches += 1
print(f"batches {batches} (x2 ops): expand diffs {diffs}, rows lost {lost}, rows inside twice {dup},"
      f" unsorted tiers {unsorted}; rows routed differently {skipped_rows}")
