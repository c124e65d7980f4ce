"""Which part of what a 512 MB sum evicts makes the next one-row step slower."""
import sys, time, statistics, ctypes, mmap
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
lib = ctypes.CDLL("/tmp/s44/flush.so")
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=3000)
runner = next(getattr(core, n) for n in dir(core) if type(getattr(core, n)).__name__ == "ModelRunner")
seen, small = set(), []
for m in runner.model.modules():
    for v in list(vars(m).values()) + list(m._parameters.values()) + list(m._buffers.values()):
        if isinstance(v, torch.Tensor) and v.nbytes < 100_000 and v.data_ptr() not in seen:
            seen.add(v.data_ptr()); small.append(v)
kv = runner.kv_cache.data  # [L, 2, blocks, KVH, bs, D]
kv_parts = [kv[i, j, :64] for i in range(kv.shape[0]) for j in range(2)]
def flush_t(ts):
    for t in ts: lib.flush(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.nbytes))
code = []
for line in open("/proc/self/maps"):
    f = line.split()
    if len(f) >= 6 and f[1].startswith("r-x") and any(s in f[5] for s in ("libtorch", "roseinfer", "python", "libc10", "libgomp", "libc.so")):
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        code.append((lo, hi - lo))
print(len(code), "code segments", sum(n for _, n in code) / 1e6, "MB;", len(small), "small tensors")
segs = {}
for line in open("/proc/self/maps"):
    f = line.split()
    if len(f) >= 6 and f[1].startswith("r-x"):
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        name = f[5].split("/")[-1]
        key = ("kernels" if "roseinfer" in name else "libtorch_cpu" if "libtorch_cpu" in name
               else "python" if "python" in name else "other")
        segs.setdefault(key, []).append((lo, hi - lo))
print({k: round(sum(n for _, n in v) / 1e6, 1) for k, v in segs.items()})
def flusher(key):
    return lambda: [lib.flush(ctypes.c_void_p(lo), ctypes.c_size_t(n)) for lo, n in segs[key]]
def flush_code():
    for lo, n in code: lib.flush(ctypes.c_void_p(lo), ctypes.c_size_t(n))
pages = mmap.mmap(-1, 64 << 20)
pages.write(b"\0" * (64 << 20))
buf = (ctypes.c_char * (64 << 20)).from_buffer(pages)
import numpy as np
arr = np.frombuffer(pages, dtype=np.uint8)
def tlb():  # a line per 4 KB page of 64 MB: the TLBs evicted, ~1 MB of lines read
    arr[::4096].sum()
a = torch.ones(128 * 1024 * 1024)
import functools
stack_t = []
stack = runner.decoder_stack
orig_for_step = type(stack).for_step
def for_step(step, kvc):
    f = orig_for_step(stack, step, kvc)
    def g(*args):
        t = time.perf_counter()
        try: return f(*args)
        finally: stack_t.append(time.perf_counter() - t)
    return g
object.__setattr__(stack, "for_step", for_step)
lm_t = []
orig_cl = runner.model.compute_logits
def cl(h):
    t = time.perf_counter()
    try: return orig_cl(h)
    finally: lm_t.append(time.perf_counter() - t)
runner.model.compute_logits = cl
variants = {"warm": lambda: None, "sum": lambda: a.sum(), "tlb": tlb,
            "flush_small+kv": lambda: (flush_t(small), flush_t(kv_parts)),
            "flush_code": flush_code, **{"code_" + k: flusher(k) for k in segs}}
for _ in range(10): core.step()
res = {k: [] for k in variants}
st = {k: [] for k in variants}
lm = {k: [] for k in variants}
for r in range(int(sys.argv[2])):
    for k, f in variants.items():
        core.step(); f()
        t = time.perf_counter(); core.step(); res[k].append(time.perf_counter() - t); st[k].append(stack_t[-1]); lm[k].append(lm_t[-1])
for k, v in res.items(): print(mode, k, f"{statistics.median(v)*1e3:.3f} ms, stack {statistics.median(st[k])*1e3:.3f}, lm_head {statistics.median(lm[k])*1e3:.3f}, rest {statistics.median([a - b - c for a, b, c in zip(v, st[k], lm[k])])*1e3:.3f}")
