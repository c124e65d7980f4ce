"""Weights in 2 MB pages (madvise MADV_HUGEPAGE before first touch) vs 4 KB pages, in one process, in turns."""
import ctypes, statistics, time, sys
import torch
from roseinfer.kernels import load_cpu_kernels
libc = ctypes.CDLL("libc.so.6", use_errno=True)
MADV_HUGEPAGE = 14
def huge_empty(numel, dtype):
    itemsize = torch.empty(0, dtype=dtype).element_size()
    nbytes = numel * itemsize
    raw = torch.empty(nbytes + (4 << 20), dtype=torch.uint8)
    p = raw.data_ptr()
    start = (p + (2 << 20) - 1) & ~((2 << 20) - 1)
    end = (start + nbytes + (2 << 20) - 1) & ~((2 << 20) - 1)
    r = libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_HUGEPAGE)
    assert r == 0, ctypes.get_errno()
    off = start - p
    return raw[off: off + nbytes].view(dtype)
def as_huge(t):
    h = huge_empty(t.numel(), t.dtype).view(t.shape)
    h.copy_(t)
    return h
k = load_cpu_kernels()
H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(V, H)]
x = {K: torch.randn(1, K).bfloat16() for K in (H, INTER)}
ws = [torch.randn(s).bfloat16() * 0.02 for s in SHAPES]
packed = [k.dpbf16_pack_weight(w) for w in ws]
packed_h = [as_huge(p) for p in packed]
qs = [torch.randint(-127, 128, s, dtype=torch.int8) for s in SHAPES]
scales = [torch.rand(q.shape[0]).bfloat16() / 64 for q in qs]
vn = [k.vnni_pack_weight(q) for q in qs]
vn_h = [as_huge(p) for p in vn]
a = torch.ones(128 << 20); a_h = as_huge(a)
print(open("/proc/self/smaps_rollup").read().split("AnonHugePages:")[1].split("\n")[0].strip(), "in huge pages")
fns = {
 "sum 4K": lambda: a.sum(), "sum 2M": lambda: a_h.sum(),
 "bf16 4K": lambda: [k.dpbf16_linear(x[p.shape[1]*2], p) for p in packed],
 "bf16 2M": lambda: [k.dpbf16_linear(x[p.shape[1]*2], p) for p in packed_h],
 "int8 4K": lambda: [k.vnni_int8_linear(x[p.shape[1]*4], p, s) for p, s in zip(vn, scales)],
 "int8 2M": lambda: [k.vnni_int8_linear(x[p.shape[1]*4], p, s) for p, s in zip(vn_h, scales)],
}
for r in range(3):
    t = {n: [] for n in fns}
    for _ in range(15):
        for n, f in fns.items():
            s = time.perf_counter(); f(); t[n].append(time.perf_counter() - s)
    print(" | ".join(f"{n} {statistics.median(v)*1e3:.2f}" for n, v in t.items()), flush=True)
