"""amx_linear (or amx_int8_linear with `int8`) and oneDNN's packed matmul over 30 layers' weights
per projection shape at M rows, x read-only (`_ro`) or written just before each call by a copy
split by rows between the threads (`_fresh`, as the norm before a projection writes it).

    .venv/bin/python docs/bench/session68/x_written_split.py M [int8]
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

K = load_cpu_kernels()
g = torch.Generator().manual_seed(0)
M = int(sys.argv[1])
int8 = "int8" in sys.argv
for n, k in [(960, 576), (576, 576), (3072, 576), (576, 1536)]:
    w0 = (torch.randn(n, k, generator=g) * 0.02).to(torch.bfloat16)
    ws = [
        K.amx_pack_weight(torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=g))
        if int8
        else K.amx_pack_weight(w0)
        for _ in range(30)
    ]
    sc = torch.rand(n, generator=g).to(torch.bfloat16) / 64
    dn = [torch.ops.mkldnn._reorder_linear_weight(w0, 32) for _ in range(30)]
    x0 = torch.randn(M, k, generator=g).to(torch.bfloat16)
    x = x0.clone()
    res = {}
    for r in range(6):
        for mode in ("amx_ro", "amx_fresh", "onednn_ro", "onednn_fresh"):
            t = 0.0
            for i in range(30):
                if "fresh" in mode:
                    x.copy_(x0)
                else:
                    x.sum()
                s = time.perf_counter()
                if mode.startswith("amx"):
                    y = (
                        K.amx_int8_linear(x, ws[i], sc, None, None)
                        if int8
                        else K.amx_linear(x, ws[i], None, None)
                    )
                else:
                    y = torch.ops.mkldnn._linear_pointwise(x, dn[i], None, "none", [], "")
                t += time.perf_counter() - s
                del y
            if r:
                res.setdefault(mode, []).append(t)
    print(
        f"{n}x{k} M={M}: "
        + "  ".join(f"{m} {1e3 * statistics.median(v):.1f}" for m, v in res.items()),
        flush=True,
    )
