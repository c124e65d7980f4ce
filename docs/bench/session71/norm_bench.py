"""`add_rms_norm` at 2,000 x 576 bf16 (a 2,000-token prompt's), 30 calls: on one x and residual
(hot) and on 30 of each (cold); the median per call over 10 rounds.

    .venv/bin/python docs/bench/session71/norm_bench.py
"""

import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
M, n = 2000, 576
w = torch.randn(n).bfloat16()
xs = [torch.randn(M, n).bfloat16() for _ in range(30)]
rs = [torch.randn(M, n).bfloat16() for _ in range(30)]


def hot() -> None:
    for _ in range(30):
        k.add_rms_norm(xs[0], rs[0], w, 1e-5)


def cold() -> None:
    for x, r in zip(xs, rs, strict=True):
        k.add_rms_norm(x, r, w, 1e-5)


for name, f in (("hot", hot), ("cold", cold)):
    t = []
    for _ in range(10):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    print(name, f"{1e3 * statistics.median(t) / 30:.3f} ms per call")
