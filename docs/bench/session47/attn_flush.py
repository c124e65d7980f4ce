# attn_t.py (session 45) with every other block's steps each preceded by a clflush of the whole
# K/V cache (data and scales): the attention's parts with K/V from memory against as the engine
# leaves them. One-row int8 steps from CTX keys on.
import ctypes, os, sys
sys.path.insert(0, "benchmarks")
os.environ["ROSE_ATTN_T"] = "1"
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
fl = ctypes.CDLL("/tmp/s47/flush.so")
blocks = int(sys.argv[1]); ctx = int(sys.argv[2])
for b in range(blocks):
    flush = b % 2 == 1
    core = decoding_core(InferenceEngine(quantization="int8"), 1, context=ctx, max_new_tokens=260)
    cache = core.runner.kv_cache
    spans = [(t.data_ptr(), t.numel() * t.element_size()) for t in (cache.data, cache.scales) if t is not None]
    h = k.region_handoff_ns(2000)
    print(f"block {b} flush={flush} handoff {h:.0f} ns", file=sys.stderr, flush=True)
    for n in range(200):
        if flush:
            for p, nbytes in spans:
                fl.flush(ctypes.c_void_p(p), ctypes.c_long(nbytes))
        core.step()
