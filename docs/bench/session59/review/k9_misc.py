# (a) `total`'s stand-in: batches where no row has both a k and a p (k rows beside p rows), old vs
# new expand() bit for bit. (b) a vocabulary equal to a tier (1,024 / 4,096): a wide-k row twice.
import sys, random
import torch
sys.path.insert(0, "/tmp/s59/review")
import old_truncation as old
from roseinfer.layers import truncation as new
rnd = random.Random(4); g = torch.Generator().manual_seed(4)
diff = 0
for b in range(60):
    V = rnd.choice([300, 1000, 49152])
    B = rnd.choice([2, 5])
    x = torch.randn(B, V, generator=g) * rnd.choice([0.01, 1, 5])
    if b % 5 == 0: x[0] = float("-inf")
    if b % 7 == 0: x[-1, 3] = float("nan")
    k = torch.tensor([rnd.choice([1, 40, 300, V // 3, V - 1]) if r % 2 == 0 else 0 for r in range(B)])
    p = torch.tensor([1.0 if r % 2 == 0 else rnd.choice([0.5, 0.95, 0.999999]) for r in range(B)])
    eo = old.expand(x, old.truncate_in_tiers(x, k, p))
    en = new.expand(x, new.truncate_in_tiers(x, k, p))
    diff += not torch.equal(eo.view(torch.int32), en.view(torch.int32))
print("k-only rows beside p-only rows: expand diffs old vs new:", diff, "of 60 batches")
for V in (1024, 4096):
    x = torch.randn(2, V, generator=g)
    for mod in (old, new):
        tiers = mod.truncate_in_tiers(x, torch.tensor([0, V // 4 + 1]), torch.tensor([0.9, 1.0]))
        print(f"V {V} {mod.__name__}: tiers' rows {[rows for rows, _ in tiers]}, widths {[t.values.shape[1] for _, t in tiers]}")
