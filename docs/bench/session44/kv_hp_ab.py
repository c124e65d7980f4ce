"""One-row steps with the KV cache in 4 KB pages (A) and in 2 MB pages (B), in turns in one
process: the first step after a 512 MB sum, and the steps after it in a row."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.layers.kv_cache as kvmod
from roseinfer.layers.huge_pages import huge_page_zeros
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}, "int8kv": {"quantization": "int8"}}[mode]
kvd = "int8" if mode == "int8kv" else "auto"
rounds = int(sys.argv[2]); context = int(sys.argv[3]) if len(sys.argv) > 3 else 70
mk = lambda: decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=context, kv_cache_dtype=kvd, max_new_tokens=rounds * 4 + 40)
A = mk()
real_zeros = torch.zeros
class HugeTorch:
    def __getattr__(self, n): return getattr(torch, n)
    @staticmethod
    def zeros(*shape, dtype=None, device=None):
        if isinstance(shape[0], (tuple, list)): shape = tuple(shape[0])
        return huge_page_zeros(tuple(shape), dtype)
kvmod.torch = HugeTorch()
B = mk()
kvmod.torch = torch
def runner(core): return next(getattr(core, n) for n in dir(core) if type(getattr(core, n)).__name__ == "ModelRunner")
for name, core in (("A", A), ("B", B)):
    d = runner(core).kv_cache.data
    print(name, "kv", d.shape, d.nbytes / 1e6, "MB at", hex(d.data_ptr()))
tot = 0
for l in open('/proc/self/smaps'):
    if l.startswith('AnonHugePages'): tot += int(l.split()[1])
a = torch.ones(128 * 1024 * 1024)
for _ in range(10): A.step(); B.step()
res = {k: ([], []) for k in "AB"}
bws = []
for r in range(rounds):
    for k, core in (("A", A), ("B", B)) if r % 2 == 0 else (("B", B), ("A", A)):
        t = time.perf_counter(); a.sum(); bws.append(512 * 1.048576 / (time.perf_counter() - t) / 1e3)
        ts = []
        for _ in range(4):
            t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
        res[k][0].append(ts[0]); res[k][1].append(statistics.median(ts[1:]))
tot2 = 0
for l in open('/proc/self/smaps'):
    if l.startswith('AnonHugePages'): tot2 += int(l.split()[1])
ptr = runner(B).kv_cache.data.data_ptr()
cur = None
for l in open('/proc/self/smaps'):
    f = l.split()
    if '-' in f[0] and len(f) > 4:
        lo, hi = (int(x, 16) for x in f[0].split('-')); cur = lo <= ptr < hi
    elif cur and l.startswith('AnonHugePages'): print("B's kv mapping", l.strip())
print(f"{mode} ctx {context}: sum {statistics.median(bws):.1f} GB/s; AnonHugePages {tot} -> {tot2} kB")
for k in "AB":
    print(mode, k, f"first {statistics.median(res[k][0])*1e3:.3f} ms, in a row {statistics.median(res[k][1])*1e3:.3f} ms")
