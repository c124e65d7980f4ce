"""Issue 22's point 2 on an AVX512-BF16 host: the linears of a SmolLM2 decode step (30 layers of
fused qkv / o / gate-up / down with the residual stream and SiLU-gated MLP, plus the LM head;
`../shared/tools/cpu_floor.py`'s module) in bf16, three ways in turns: eager `F.linear`,
`torch.compile` with Inductor's freezing (oneDNN on prepacked weights), and the same module with
every `F.linear` on `dpbf16_linear` over weights packed once. Milliseconds per step, the better
of ROUNDS medians of 20 calls.

    .venv/bin/python docs/bench/session25/linears_vs_inductor.py 1,8,16,32,64 3
"""

import sys
import time

import torch
import torch._inductor.config as inductor_config
import torch.nn.functional as F

from roseinfer.kernels import load_cpu_kernels

H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
kernels = load_cpu_kernels()


class Linears(torch.nn.Module):
    def __init__(self, linear=F.linear) -> None:
        super().__init__()
        torch.manual_seed(0)
        p = lambda *s: torch.nn.Parameter(
            torch.randn(*s, dtype=torch.bfloat16) * 0.02, requires_grad=False
        )  # noqa: E731
        self.qkv = torch.nn.ParameterList([p(H + 2 * KV, H) for _ in range(L)])
        self.o = torch.nn.ParameterList([p(H, H) for _ in range(L)])
        self.gate_up = torch.nn.ParameterList([p(2 * INTER, H) for _ in range(L)])
        self.down = torch.nn.ParameterList([p(H, INTER) for _ in range(L)])
        self.head = p(V, H)
        self.linear = linear

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(L):
            q = self.linear(x, self.qkv[i])[:, :H]
            x = x + self.linear(q.contiguous(), self.o[i])
            g, u = self.linear(x, self.gate_up[i]).chunk(2, -1)
            x = x + self.linear(F.silu(g) * u, self.down[i])
        return self.linear(x, self.head)


class Dpbf16(Linears):
    def __init__(self) -> None:
        super().__init__()
        self.packed = {id(w): kernels.dpbf16_pack_weight(w) for w in self.parameters()}
        self.linear = lambda x, w: kernels.dpbf16_linear(x, self.packed[id(w)])


def median_ms(fn, x, n: int = 20) -> float:
    for _ in range(3):
        fn(x)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t)
    return sorted(times)[n // 2] * 1e3


inductor_config.freezing = True
with torch.no_grad():
    ways = {
        "eager": Linears(),
        "inductor-frozen": torch.compile(Linears(), dynamic=False),
        "dpbf16": Dpbf16(),
    }
    for batch in [int(b) for b in sys.argv[1].split(",")]:
        x = torch.randn(batch, H, dtype=torch.bfloat16)
        best = {name: float("inf") for name in ways}
        for _ in range(int(sys.argv[2])):
            for name, fn in ways.items():
                best[name] = min(best[name], median_ms(fn, x))
        print(
            f"batch {batch:2d}: " + ", ".join(f"{n} {t:.2f} ms" for n, t in best.items()),
            flush=True,
        )
