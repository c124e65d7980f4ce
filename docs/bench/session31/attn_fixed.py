"""One layer's decode attention at batch 1 called again and again from Python (warm: its K/V, code
and metadata in cache), SmolLM2's shapes, bf16 cache: microseconds per call at a context.

    .venv/bin/python docs/bench/session31/attn_fixed.py CONTEXT CALLS   # OMP_NUM_THREADS=1 for one thread
"""
import sys, time, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
H, KVH, D, BS = 9, 3, 64, 16
ctx = int(sys.argv[1]); n = int(sys.argv[2])
blocks = 64
kc = torch.randn(blocks, KVH, BS, D).bfloat16(); vc = torch.randn(blocks, KVH, BS, D).bfloat16()
qkv = torch.randn(1, (H + 2 * KVH) * D).bfloat16()
cos = torch.randn(1, D // 2).bfloat16(); sin = torch.randn(1, D // 2).bfloat16()
slot = torch.tensor([ctx - 1]); table = torch.arange(blocks)[None].contiguous(); lens = torch.tensor([ctx])
for _ in range(1000): k.paged_decode_attention_qkv(qkv, cos, sin, H, kc, vc, slot, table, lens, 0.125)
t = time.perf_counter()
for _ in range(n): k.paged_decode_attention_qkv(qkv, cos, sin, H, kc, vc, slot, table, lens, 0.125)
print(f"ctx {ctx}: {(time.perf_counter() - t) / n * 1e6:.2f} us per call, threads {torch.get_num_threads()}")
