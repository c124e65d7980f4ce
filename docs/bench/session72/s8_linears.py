"""SmolLM2's 30 layers of int8 linears at ROWS rows (a prefill chunk): `amx_int8_linear` (the
weights widened to bf16 tiles) against `amx_s8_linear` (x rounded to int8 per row, int8 tiles),
qkv / o / gate_up with SiLU·mul / down, each layer its own weights, in turns; medians of ROUNDS.

    .venv/bin/python docs/bench/session72/s8_linears.py ROWS ROUNDS
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
rows, rounds = int(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
H, INTER, QKV, L = 576, 1536, 960, 30
shapes = {"qkv": (QKV, H), "o": (H, H), "gate_up": (2 * INTER, H), "down": (H, INTER)}
layers = []
for _ in range(L):
    layer = {}
    for name, (n, kk) in shapes.items():
        w = torch.randint(-127, 128, (n, kk), dtype=torch.int8)
        s = (torch.rand(n) / 64).bfloat16()
        gated = name == "gate_up"
        layer[name] = (
            k.amx_pack_gated(w) if gated else k.amx_pack_weight(w),
            k.vnni_pack_gated(w) if gated else k.vnni_pack_weight(w),
            s,
        )
    layers.append(layer)
xs = {name: torch.randn(rows, kk).bfloat16() for name, (n, kk) in shapes.items()}


def run(kind: str, name: str) -> float:
    x = xs[name]
    s0 = time.perf_counter()
    for layer in layers:
        tile, vnni, s = layer[name]
        if kind == "bf16 tiles":
            if name == "gate_up":
                k.amx_gated_linear(x, tile, s, None, True)
            else:
                k.amx_int8_linear(x, tile, s)
        else:
            k.amx_s8_linear(x, vnni, s, None, name == "gate_up", name == "gate_up")
    return time.perf_counter() - s0


times = {(kind, n): [] for kind in ("bf16 tiles", "int8 tiles") for n in shapes}
for r in range(rounds + 1):
    for key in times:
        t = run(*key)
        if r:
            times[key].append(t)
print(f"{rows} rows, 30 layers each, ms (medians of {rounds}):")
for n in shapes:
    a, b = (1e3 * statistics.median(times[(kind, n)]) for kind in ("bf16 tiles", "int8 tiles"))
    print(f"  {n:8s} amx_int8_linear {a:7.1f}   amx_s8_linear {b:7.1f}   ({b / a - 1:+.0%})")
