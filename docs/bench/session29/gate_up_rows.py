"""SmolLM2's gate_up_proj alone (bf16 [3072, 576] on dpbf16; int8 on vnni) at M rows: the plain
packing (tasks of 3 tiles) then `silu_and_mul`, against the gated packing (tasks of a gate tile
and its up tile) with SiLU·mul in the epilogue, and its plain output; 30 distinct weights a
round as a step streams them, the forms in turns, medians per call.

    PYTHONPATH=. .venv/bin/python docs/bench/session29/gate_up_rows.py
"""
import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.manual_seed(0)
L, I, H = 30, 1536, 576
ws = [torch.randn(2 * I, H).bfloat16() * 0.05 for _ in range(L)]
qs = [(torch.randint(-127, 128, (2 * I, H), dtype=torch.int8), torch.rand(2 * I).bfloat16() * 0.01) for _ in range(L)]
forms = {
    "bf16 plain + silu_and_mul": ([k.dpbf16_pack_weight(w) for w in ws], lambda x, p, i: k.silu_and_mul(k.dpbf16_linear(x, p))),
    "bf16 gated, epilogue": ([k.dpbf16_pack_gated(w) for w in ws], lambda x, p, i: k.dpbf16_gated_linear(x, p, None, True)),
    "bf16 gated, plain out": ([k.dpbf16_pack_gated(w) for w in ws], lambda x, p, i: k.dpbf16_gated_linear(x, p)),
    "int8 plain + silu_and_mul": ([k.vnni_pack_weight(q) for q, _ in qs], lambda x, p, i: k.silu_and_mul(k.vnni_int8_linear(x, p, qs[i][1]))),
    "int8 gated, epilogue": ([k.vnni_pack_gated(q) for q, _ in qs], lambda x, p, i: k.vnni_int8_gated_linear(x, p, qs[i][1], None, True)),
}
for rows in (1, 8, 32, 64, 512):
    x = torch.randn(rows, H).bfloat16()
    times = {name: [] for name in forms}
    for r in range(7 if rows < 512 else 3):
        for name, (packed, run) in (list(forms.items()) if r % 2 else list(forms.items())[::-1]):
            start = time.perf_counter()
            for i in range(L):
                run(x, packed[i], i)
            times[name].append((time.perf_counter() - start) / L)
    print(f"{rows} rows: " + ", ".join(f"{n} {statistics.median(t) * 1e6:.0f} us" for n, t in times.items()), flush=True)
