"""amx_linear against aten's linear (oneDNN) at 2,000 rows: 30 layers of each of SmolLM2's linear
shapes, random bf16 weights, the best of 5 turns each.

    .venv/bin/python docs/bench/session70/amx_shapes.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.manual_seed(0)
M = 2000
for N, K, name in [(960, 576, "qkv"), (576, 576, "o"), (3072, 576, "gate_up"), (576, 1536, "down")]:
    ws = [(torch.randn(N, K) * 0.02).to(torch.bfloat16) for _ in range(30)]
    packed = [k.amx_pack_weight(w) for w in ws]
    x = torch.randn(M, K).to(torch.bfloat16)
    best: dict[str, float] = {}
    for _ in range(5):
        for kind in ("amx", "onednn"):
            t = time.perf_counter()
            if kind == "amx":
                for p in packed:
                    k.amx_linear(x, p, None, None)
            else:
                for w in ws:
                    torch.nn.functional.linear(x, w)
            best[kind] = min(best.get(kind, 9.0), time.perf_counter() - t)
    fl = 2 * M * N * K * 30
    print(
        f"{name:8s} N {N:5d} K {K:5d}: amx {best['amx'] * 1e3:6.1f} ms "
        f"({fl / best['amx'] / 1e12:.2f} TFLOP/s)  aten {best['onednn'] * 1e3:6.1f} ms "
        f"({fl / best['onednn'] / 1e12:.2f})"
    )
