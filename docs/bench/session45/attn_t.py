# The decode attention's parts per step (ROSE_ATTN_T=1 with attn_timing.patch), 200-step blocks,
# each with the loop handoff before it: one-row int8 steps from CTX keys on.
import os, sys, time
sys.path.insert(0, "benchmarks")
os.environ["ROSE_ATTN_T"] = "1"
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
blocks = int(sys.argv[1]); ctx = int(sys.argv[2])
for b in range(blocks):
    core = decoding_core(InferenceEngine(quantization="int8"), 1, context=ctx, max_new_tokens=260)
    h = k.region_handoff_ns(2000)
    print(f"handoff {h:.0f} ns", file=sys.stderr, flush=True)
    n = 0
    while n < 200 - 1:  # the report comes every 6000 calls
        core.step(); n += 1
    core.step()
