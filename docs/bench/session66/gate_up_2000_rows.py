"""SmolLM2's gate_up (3,072 x 576) x 30 layers at 2,000 rows in bf16 (a prompt alone in one step):
oneDNN's packed matmul and `silu_and_mul` after it (what rows past `AMX_ROWS` run) against the
gated AMX kernel with SiLU·mul in its epilogue; medians of 5 turns, ms.

    .venv/bin/python docs/bench/session66/gate_up_2000_rows.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
assert k is not None and k.amx_linear_available(), "needs AMX"
g = torch.Generator().manual_seed(0)
weights = [(torch.randn(3072, 576, generator=g) * 0.05).bfloat16() for _ in range(30)]
onednn = [torch.ops.mkldnn._reorder_linear_weight(w, 32) for w in weights]
gated = [k.amx_pack_gated(w) for w in weights]
x = torch.randn(2000, 576, generator=g).bfloat16()
runs = {
    "oneDNN + silu_and_mul": lambda: [
        k.silu_and_mul(torch.ops.mkldnn._linear_pointwise(x, w, None, "none", [], ""))
        for w in onednn
    ],
    "AMX gated, SiLU·mul in the epilogue": lambda: [
        k.amx_gated_linear(x, w, None, None, True) for w in gated
    ],
}
times: dict[str, list[float]] = {n: [] for n in runs}
for r in range(6):
    for n, fn in runs.items():
        t0 = time.perf_counter()
        fn()
        if r:
            times[n].append(time.perf_counter() - t0)
print(", ".join(f"{n} {sorted(v)[2] * 1e3:.1f} ms" for n, v in times.items()))
