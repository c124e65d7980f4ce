"""The first step after: nothing, the 512 MB sum, 64 MB read on 4 KB pages, 64 MB on 2 MB pages, TLB only."""
import sys, time, statistics, mmap
sys.path.insert(0, "benchmarks")
import numpy as np, torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=4000)
def region(mb, huge):
    m = mmap.mmap(-1, mb << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    arr = np.frombuffer(m, dtype=np.uint64)
    arr[:] = 1
    return m, arr
m4, small_pages = region(64, False)
m2, huge_pages = region(64, True)
m3, tlb_pages = region(64, False)
a = torch.ones(128 * 1024 * 1024)
variants = {"warm": lambda: None, "sum512": lambda: a.sum(),
            "read64_4k": lambda: small_pages.sum(), "read64_2m": lambda: huge_pages.sum(),
            "tlb_only": lambda: tlb_pages[::512].sum()}
for _ in range(10): core.step()
res = {k: [] for k in variants}
for r in range(int(sys.argv[2])):
    for k, f in variants.items():
        core.step(); f()
        t = time.perf_counter(); core.step(); res[k].append(time.perf_counter() - t)
s = time.perf_counter(); a.sum(); bw = 512 * 1.048576 / (time.perf_counter() - s) / 1e3
for k, v in res.items(): print(mode, k, f"{statistics.median(v)*1e3:.3f} ms")
print("sum GB/s", round(bw, 1))
