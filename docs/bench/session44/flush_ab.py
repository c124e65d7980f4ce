"""A step after: the sum (cold), nothing (warm), or the weights alone flushed from the caches."""
import sys, time, statistics, ctypes
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
lib = ctypes.CDLL("/tmp/s44/flush.so")
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=3000)
runner = next(getattr(core, n) for n in dir(core) if type(getattr(core, n)).__name__ == "ModelRunner")
seen, big = set(), []
for m in runner.model.modules():
    for v in list(vars(m).values()) + list(m._parameters.values()) + list(m._buffers.values()):
        if isinstance(v, torch.Tensor) and v.nbytes >= 100_000 and v.data_ptr() not in seen:
            seen.add(v.data_ptr()); big.append(v)
print(len(big), "big tensors", sum(t.nbytes for t in big) / 1e6, "MB")
def flush_weights():
    for t in big: lib.flush(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(t.nbytes))
a = torch.ones(128 * 1024 * 1024)
variants = {"sum": lambda: a.sum(), "warm": lambda: None, "flush_w": flush_weights,
            "sum+flush_w": lambda: (a.sum(), flush_weights())}
for _ in range(10): core.step()
res = {k: [] for k in variants}
for r in range(int(sys.argv[2])):
    for k, f in variants.items():
        core.step(); f()
        t = time.perf_counter(); core.step(); res[k].append(time.perf_counter() - t)
for k, v in res.items(): print(mode, k, f"{statistics.median(v)*1e3:.3f} ms")
