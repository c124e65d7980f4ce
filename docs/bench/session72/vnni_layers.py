"""SmolLM2-135M's 30 layers of int8 linears at one row through `vnni_int8_linear` (qkv, o_proj,
down) and `vnni_int8_gated_linear` (gate_up with SiLU·mul), each layer its own weights, as a
one-row decode step reads them: the median time of a pass over the 30 layers, ROUNDS passes.
Run in each tree (PYTHONPATH) to compare the kernels alone.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session72/vnni_layers.py ROUNDS
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
assert k.vnni_int8_linear_available()
torch.manual_seed(0)
H, INTER, QKV, L = 576, 1536, 960, 30


def layer() -> tuple:
    def q(n: int, kk: int) -> tuple:
        w = torch.randint(-127, 128, (n, kk), dtype=torch.int8)
        return w, torch.rand(n, dtype=torch.bfloat16) / 64

    (qkv, sq), (o, so), (gu, sg), (dn, sd) = q(QKV, H), q(H, H), q(2 * INTER, H), q(H, INTER)
    return (k.vnni_pack_weight(qkv), sq, k.vnni_pack_weight(o), so, k.vnni_pack_gated(gu), sg,
            k.vnni_pack_weight(dn), sd)  # fmt: skip


layers = [layer() for _ in range(L)]
x = torch.randn(1, H, dtype=torch.bfloat16)
times = []
for r in range(int(sys.argv[1]) + 3):
    s = time.perf_counter()
    for qkv, sq, o, so, gu, sg, dn, sd in layers:
        k.vnni_int8_linear(x, qkv, sq, None, None)
        k.vnni_int8_linear(x, o, so, None, None)
        a = k.vnni_int8_gated_linear(x, gu, sg, None, True, None)
        k.vnni_int8_linear(a, dn, sd, None, None)
    if r >= 3:
        times.append(time.perf_counter() - s)
t = sorted(times)
print(
    f"30 layers' int8 linears at one row: {1e3 * statistics.median(t):.3f} ms "
    f"(q {1e3 * t[len(t) // 4]:.3f}-{1e3 * t[3 * len(t) // 4]:.3f})"
)
