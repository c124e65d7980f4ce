"""Where widening a narrow weight to fp32 for aten's linear (MKL's sgemm) beats the streaming C++
kernels, by rows: SmolLM2's 120 decoder linears (30 layers, random weights) through
`DecodeLinear` with the kernel at any row count against the widened sgemm at any row count,
taking turns. Session 13: `AVX2_KERNEL_ROWS` on a CPU with AVX2 only.

    .venv/bin/python docs/bench/session13/widen_rows.py 32,64,128,256,512
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
assert kernels is not None
H, INTER, KV, LAYERS = 576, 1536, 192, 30
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)]
ANY = sys.maxsize
torch.manual_seed(0)


def layer_sets(kind: str) -> dict[str, list]:
    """Per path ("kernel", "sgemm"): the 120 DecodeLinears of `kind` (fp32, bf16, int8)."""
    sets: dict[str, list] = {"kernel": [], "sgemm": []}
    for _ in range(LAYERS):
        for n, k in SHAPES:
            w = torch.randn(n, k) * 0.02
            if kind == "int8":
                scale = w.abs().amax(1) / 127
                q = torch.round(w / scale[:, None]).to(torch.int8)
                args = ("int8", q, scale, None)
            else:
                dtype = torch.float32 if kind == "fp32" else torch.bfloat16
                args = ("small_batch", w.to(dtype), None, None)
            sets["kernel"].append(kernels.DecodeLinear(*args, kernel_rows=ANY))
            sets["sgemm"].append(kernels.DecodeLinear(*args, kernel_rows=0))
    return sets


for kind in ("fp32", "bf16", "int8"):
    sets = layer_sets(kind)
    dtype = torch.bfloat16 if kind == "bf16" else torch.float32
    for rows in [int(r) for r in sys.argv[1].split(",")]:
        xs = {k: torch.randn(rows, k).to(dtype) for k in (H, INTER)}
        times: dict[str, list[float]] = {"kernel": [], "sgemm": []}
        for _ in range(7):
            for path, linears in sets.items():
                t = time.perf_counter()
                for lin, (_, k) in zip(linears, SHAPES * LAYERS, strict=True):
                    lin(xs[k])
                times[path].append(time.perf_counter() - t)
        med = {p: statistics.median(v[1:]) * 1e3 for p, v in times.items()}
        print(
            f"{kind} rows {rows:4d}: kernel {med['kernel']:7.1f} ms  widened sgemm "
            f"{med['sgemm']:7.1f} ms  ({med['kernel'] / med['sgemm']:.2f}x)",
            flush=True,
        )
