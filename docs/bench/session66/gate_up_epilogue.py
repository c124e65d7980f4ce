"""SmolLM2's gate_up (3,072 x 576) x 30 layers at 512 rows on AMX, bf16 and int8 weights: the
plain linear followed by `silu_and_mul`, the gated packing with SiLU·mul in its epilogue, and the
plain linear alone; medians of 9 turns, ms.

    .venv/bin/python docs/bench/session66/gate_up_epilogue.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
assert k is not None and k.amx_int8_linear_available(), "needs AMX"
g = torch.Generator().manual_seed(0)
x = torch.randn(512, 576, generator=g).bfloat16()


def measure(name: str, weights: list[torch.Tensor], scale: torch.Tensor | None) -> None:
    plain = [k.amx_pack_weight(w) for w in weights]
    gated = [k.amx_pack_gated(w) for w in weights]

    def linear(w: torch.Tensor) -> torch.Tensor:
        return k.amx_linear(x, w) if scale is None else k.amx_int8_linear(x, w, scale)

    runs = {
        "linear + silu_and_mul": lambda: [k.silu_and_mul(linear(w)) for w in plain],
        "gated, SiLU·mul in the epilogue": lambda: [
            k.amx_gated_linear(x, w, scale, None, True) for w in gated
        ],
        "linear alone": lambda: [linear(w) for w in plain],
    }
    times: dict[str, list[float]] = {n: [] for n in runs}
    for r in range(10):
        for n, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            if r:
                times[n].append(time.perf_counter() - t0)
    print(f"{name}: " + ", ".join(f"{n} {sorted(v)[4] * 1e3:.1f} ms" for n, v in times.items()))


measure("bf16", [(torch.randn(3072, 576, generator=g) * 0.05).bfloat16() for _ in range(30)], None)
measure(
    "int8",
    [torch.randint(-127, 128, (3072, 576), generator=g, dtype=torch.int8) for _ in range(30)],
    (torch.rand(3072, generator=g) / 64).bfloat16(),
)
