"""Session 37: the int8 LM head (49152 x 576, vnni_int8_linear, one row) timed cold (after a 256 MB
sum) and again, beside 30 linears of gate_up's shape cold; the sum's own bandwidth after:
    PYTHONPATH=. python docs/bench/session37/lm_head.py"""
import time, statistics, torch, sys
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.manual_seed(0)
def make(n, kk):
    w = torch.randint(-127, 128, (n, kk), dtype=torch.int8)
    return k.vnni_pack_weight(w), torch.rand(n, dtype=torch.bfloat16) / 100
lm = make(49152, 576)
layers = [make(3072, 576) for _ in range(30)]  # ~53 MB of other weights to evict the LM head
big = torch.ones(64 * 1024 * 1024)
x = torch.randn(1, 576).bfloat16()
res = {"lm_head cold": [], "lm_head warm-ish": [], "30 x [3072,576] cold": []}
for r in range(60):
    big.sum()
    t = time.perf_counter(); k.vnni_int8_linear(x, lm[0], lm[1], None); res["lm_head cold"].append(time.perf_counter() - t)
    t = time.perf_counter(); k.vnni_int8_linear(x, lm[0], lm[1], None); res["lm_head warm-ish"].append(time.perf_counter() - t)
    big.sum()
    t = time.perf_counter()
    for w, s in layers: k.vnni_int8_linear(x, w, s, None)
    res["30 x [3072,576] cold"].append(time.perf_counter() - t)
t = time.perf_counter(); big.sum(); bw = big.numel() * 4 / (time.perf_counter() - t) / 1e9
for name, v in res.items():
    print(f"{name}: {1e3 * statistics.median(v):.3f} ms")
print(f"sum: {bw:.1f} GB/s; lm head {49152*576/1e6:.1f} MB, layers {30*3072*576/1e6:.1f} MB")
