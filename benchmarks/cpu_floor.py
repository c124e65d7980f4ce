"""Measure this machine's floors for decoding SmolLM2-135M-shaped weights on the CPU.

A decode step of a 135M Llama reads every weight once; this script times only the linear layers
(30 layers of fused qkv / o / gate-up / down, plus the 49152-row LM head) with random weights,
so it is a floor that attention, sampling and scheduling can only add to.

    python benchmarks/cpu_floor.py   # needs torch==2.13.0; takes about a minute
"""

import time

import torch
import torch.nn.functional as F

H, INTER, KV, L, V = (
    576,
    1536,
    192,
    30,
    49152,
)  # SmolLM2-135M: hidden, intermediate, kv width, layers, vocab


class Linears(torch.nn.Module):
    """Only the matmuls of one decode step, with a residual stream and SiLU-gated MLP."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        p = lambda *s: torch.nn.Parameter(torch.randn(*s, dtype=dtype) * 0.02, requires_grad=False)  # noqa: E731
        self.qkv = torch.nn.ParameterList([p(H + 2 * KV, H) for _ in range(L)])
        self.o = torch.nn.ParameterList([p(H, H) for _ in range(L)])
        self.gate_up = torch.nn.ParameterList([p(2 * INTER, H) for _ in range(L)])
        self.down = torch.nn.ParameterList([p(H, INTER) for _ in range(L)])
        self.head = p(V, H)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i in range(L):
            q = F.linear(x, self.qkv[i])[:, :H]
            x = x + F.linear(q, self.o[i])
            g, u = F.linear(x, self.gate_up[i]).chunk(2, -1)
            x = x + F.linear(F.silu(g) * u, self.down[i])
        return F.linear(x, self.head)


def ms_per_call(fn, x, n: int = 20) -> float:
    for _ in range(3):
        fn(x)
    t = time.perf_counter()
    for _ in range(n):
        fn(x)
    return (time.perf_counter() - t) / n * 1e3


def main() -> None:
    torch.set_num_threads(torch.get_num_threads())
    a = torch.ones(128 * 1024 * 1024)  # 512 MB fp32
    t = time.perf_counter()
    for _ in range(5):
        a.sum()
    print(f"read bandwidth: {a.numel() * 4 * 5 / (time.perf_counter() - t) / 1e9:.1f} GB/s")
    import torch._inductor.config as inductor_config

    inductor_config.freezing = True  # lets Inductor prepack weights for oneDNN
    with torch.no_grad():
        for dtype in (torch.float32, torch.bfloat16):
            model = Linears(dtype).eval()
            compiled = torch.compile(model, dynamic=False)
            for batch in (1, 8, 32, 64):
                x = torch.randn(batch, H, dtype=dtype)
                eager, frozen = ms_per_call(model, x), ms_per_call(compiled, x)
                print(
                    f"{str(dtype):15s} batch {batch:3d}: eager {eager:6.2f} ms ({batch / eager * 1e3:6.0f} tok/s)"
                    f" | compiled+frozen {frozen:6.2f} ms ({batch / frozen * 1e3:6.0f} tok/s)"
                )


if __name__ == "__main__":
    main()
