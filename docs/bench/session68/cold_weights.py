"""amx_linear (or amx_int8_linear with `int8`) over 30 distinct weights per projection shape at
M rows: `hot` (the weights, x and y read just before each call) against `coldw` (a 256 MB read
in between, then x and y), `coldw2`, `coldx`, `coldy` variants; `huge` puts the weights in 2 MB
pages as the engine does.

    .venv/bin/python docs/bench/session68/cold_weights.py M hot,coldw [huge] [int8]
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.huge_pages import huge_page_zeros


def hp(t):
    if "huge" not in sys.argv:
        return t
    z = huge_page_zeros(tuple(t.shape), t.dtype)
    z.copy_(t)
    return z


K = load_cpu_kernels()
g = torch.Generator().manual_seed(0)
M = int(sys.argv[1])
modes = sys.argv[2].split(",")
flush = torch.ones(64 << 20)
for n, k in [(576, 576), (960, 576), (3072, 576), (576, 1536)]:
    int8 = "int8" in sys.argv
    if int8:
        ws = [
            hp(K.amx_pack_weight(torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=g)))
            for _ in range(30)
        ]
        sc = torch.rand(n, generator=g).to(torch.bfloat16) / 64
    else:
        ws = [
            hp(K.amx_pack_weight((torch.randn(n, k, generator=g) * 0.02).to(torch.bfloat16)))
            for _ in range(30)
        ]
    x = torch.randn(M, k, generator=g).to(torch.bfloat16)
    y = torch.empty(M, n, dtype=torch.bfloat16)
    res = {m: [] for m in modes}
    for r in range(6):
        for mode in modes:
            t = 0.0
            for w in ws:
                if mode == "coldw":
                    flush.sum()
                    x.sum()
                    y.zero_()
                if mode == "hot":
                    w.sum()
                    x.sum()
                    y.zero_()
                if mode == "coldw2":
                    flush.sum()
                    w.sum()
                    x.sum()
                    y.zero_()
                if mode == "coldx":
                    flush.sum()
                    w.sum()
                    y.zero_()
                if mode == "coldy":
                    flush.sum()
                    w.sum()
                    x.sum()
                s = time.perf_counter()
                (K.amx_int8_linear(x, w, sc, None, y) if int8 else K.amx_linear(x, w, None, y))
                t += time.perf_counter() - s
            if r:
                res[mode].append(t)
    fl = 2 * M * n * k * 30
    print(
        f"{n}x{k} M={M}: "
        + "  ".join(
            f"{m} {1e3 * statistics.median(v):.2f} ms ({fl / statistics.median(v) / 1e12:.2f} TF/s)"
            for m, v in res.items()
        ),
        flush=True,
    )
