# top_candidates_rows at m >= 2048 (the byte-wise sort) against torch's stable descending sort
import torch
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig
torch.manual_seed(0)
be = select_backend(EngineConfig(dtype="float32"), torch.device("cpu"))
kt = be.kernels
V = 49152
def rows(dtype):
    out = []
    out.append(torch.zeros(V))                                  # all equal: only the id bytes vary
    z = torch.zeros(V); z[::2] = -0.0; out.append(z)            # -0 and +0 mixed
    out.append(torch.full((V,), float("-inf")))                 # -inf row
    r = torch.randn(V); r[r < 0] = float("-inf"); out.append(r) # half -inf
    out.append(torch.randint(0, 3, (V,)).float())               # 3 distinct values
    out.append(torch.randn(V) * 1e-40)                          # denormals
    d = torch.randn(V) * 1e30; d[:5] = float("inf"); out.append(d)  # +inf and huge
    out.append(torch.arange(V).float())                         # rising with the id
    out.append(torch.randn(V))
    return torch.stack(out).to(dtype)
bad = 0
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    x = rows(dtype)
    for m in (2048, 4096, 5001, V):
        vals, ids = kt.top_candidates_rows(x, m)
        ref_v, ref_i = x.float().sort(dim=-1, descending=True, stable=True)
        # -0 and +0 are equal logits: torch's stable sort keeps token order, as the kernel
        ok_i = torch.equal(ids, ref_i[:, :m])
        ok_v = torch.equal(vals.view(torch.int32), x.float().gather(1, ids).view(torch.int32))
        if not (ok_i and ok_v):
            bad += 1
            print("MISMATCH", dtype, m, ok_i, ok_v, (ids != ref_i[:, :m]).any(1).tolist())
print("done, mismatching (dtype, m) cases:", bad)
