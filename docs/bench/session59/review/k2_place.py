# sample_candidates_rows: the "placed" path (ids a permutation of 0..m-1, m >= 2048) against the
# sorted path on the same order (ids + m: out of range, so sorted; the token then minus m) and
# against torch's sample_candidates; NaN, zero, all-zero and +inf weights; non-permutations.
import torch
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
from roseinfer.layers.draw import sample_candidates
torch.manual_seed(0)
kt = select_backend(EngineConfig(dtype="float32"), torch.device("cpu")).kernels
def weights_rows(m):
    w = [torch.rand(m), torch.rand(m)]
    w[1][1::2] = 0.0
    w.append(torch.zeros(m))                         # all zero
    n = torch.rand(m); n[m // 3] = float("nan"); w.append(n)        # one NaN
    n = torch.rand(m); n[:] = float("nan"); w.append(n)             # all NaN
    i = torch.rand(m); i[7] = float("inf"); w.append(i)             # +inf
    f = torch.full((m,), 1.6e-38); f[0] = 1.0; w.append(f)          # floored
    return torch.stack(w)
mism_sorted = mism_torch = 0
for m in (2047, 2048, 3000, 49152):
    w = weights_rows(m)
    R = len(w)
    ids = torch.stack([torch.randperm(m) for _ in range(R)])
    for trial in range(40):
        u = torch.rand(R, dtype=torch.float64)
        if trial == 0: u[:] = 0.0
        if trial == 1: u[:] = 1.0 - 2.0 ** -53
        a = kt.sample_candidates_rows(w, ids, u)
        b = kt.sample_candidates_rows(w, ids + m, u) - m       # the sorted path, same order
        c = sample_candidates(w, ids, u)
        mism_sorted += int((a != b).sum()); mism_torch += int((a != c).sum())
print("placed vs sorted mismatches:", mism_sorted, " placed vs torch mismatches:", mism_torch)
# not permutations (m >= 2048): the placed loop gives up part way; the sorted path must redo all
m = 4096
w = torch.rand(3, m)
base = torch.randperm(m)
dup = base.clone(); dup[-1] = dup[0]                 # duplicate found at the very end
neg = base.clone(); neg[-1] = -1                     # negative id at the end
big = base.clone(); big[m // 2] = m                  # out of range half way
ids = torch.stack([dup, neg, big])
bad = 0
for trial in range(200):
    u = torch.rand(3, dtype=torch.float64)
    a = kt.sample_candidates_rows(w, ids, u)
    c = sample_candidates(w, ids, u)
    # duplicates: the two sorts may order equal ids differently, but the token is an id anyway
    bad += int((a != c).sum())
print("non-permutation rows vs torch mismatches (200 draws x 3 rows):", bad)
