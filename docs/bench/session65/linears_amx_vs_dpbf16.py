"""SmolLM2's 121 decode linears (LM head included) in bf16 on an AMX CPU: `amx_linear` against
`dpbf16_linear` (each through its DecodeLinear), random weights, at each row count of ROWS; the
better of 3 medians of 15 calls of all 121, ms.

    .venv/bin/python docs/bench/session65/linears_amx_vs_dpbf16.py 1,2,4,8,16,32,64
"""

import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

H, INTER, KV, L = 576, 1536, 192, 30
k = load_cpu_kernels()
print("amx", k.amx_linear_available(), "dpbf16", k.dpbf16_linear_available())
torch.manual_seed(0)
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(49152, H)]


def med(fn, runs=15):
    fn()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[runs // 2] * 1e3


with torch.inference_mode():
    ws = [torch.randn(n, kk).bfloat16() * 0.02 for n, kk in shapes]
    dpl = [k.DecodeLinear("dpbf16", k.dpbf16_pack_weight(w), None, None) for w in ws]
    amxl = [k.DecodeLinear("amx", k.amx_pack_weight(w), None, None) for w in ws]
    for rows in [int(r) for r in sys.argv[1].split(",")]:
        xs = {kk: torch.randn(rows, kk).bfloat16() for kk in (H, INTER)}
        res = {"amx": [], "dpbf16": []}
        for _ in range(3):
            for name, layers in (("amx", amxl), ("dpbf16", dpl)):

                def run(layers=layers, xs=xs) -> None:
                    for layer, w in zip(layers, ws, strict=True):
                        layer(xs[w.shape[1]])

                res[name].append(med(run))
        print(rows, {n: round(min(v), 2) for n, v in res.items()}, flush=True)
