"""Where the decode kernel's time goes inside a one-row step: `attn_profile.patch` (timers in
`paged_decode_attention_qkv` and `decode_kernel`) applied in a scratch worktree.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/attn_profile.py int8|bf16 BATCH CONTEXT
"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
mode, B, ctx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=ctx, max_new_tokens=300)
k.set_ab_mode(1)
for _ in range(10): core.step()
k.attn_prof()
n = 100
t = time.perf_counter()
for _ in range(n): core.step()
step = (time.perf_counter() - t) / n * 1e3
p = [x / n * 1e3 for x in k.attn_prof()]
print(f"{mode} batch {B} ctx {ctx}: step {step:.3f} ms; attention entry total {p[0]:.3f}, write {p[1]:.3f}, "
      f"between write and ranges {p[5]:.3f}, ranges+region {p[2]:.3f}, thread0 tasks {p[3]:.3f}, thread1 tasks {p[4]:.3f} (ms per step)")
