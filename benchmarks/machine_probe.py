"""How fast this machine is right now: the 120 linear layers of a SmolLM2-135M decode step
(oneDNN-prepacked bf16 weights, random values), at batch 1 and 32.

    .venv/bin/python benchmarks/machine_probe.py

The same code gave 12.9 / 15.0 ms on a quiet machine and 17.5 / 20.3 ms an hour later under
host contention (2026-11-21): compare other numbers only between runs with similar probes.
"""

from __future__ import annotations

import time

import torch

H, INTER, KV, L = 576, 1536, 192, 30  # SmolLM2-135M: hidden, intermediate, kv width, layers


def main() -> None:
    torch.manual_seed(0)
    shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
    with torch.inference_mode():
        packed = [
            torch.ops.mkldnn._reorder_linear_weight(torch.randn(n, k).bfloat16() * 0.02, 32)
            for n, k in shapes
        ]
        results = []
        for batch in (1, 32):
            xs = {k: torch.randn(batch, k).bfloat16() for k in (H, INTER)}

            def step(xs=xs) -> None:
                for (_, k), w in zip(shapes, packed, strict=True):
                    torch.ops.mkldnn._linear_pointwise(xs[k], w, None, "none", [], "")

            for _ in range(3):
                step()
            start = time.perf_counter()
            for _ in range(10):
                step()
            results.append(f"batch {batch}: {(time.perf_counter() - start) / 10 * 1000:.1f} ms")
    print("machine probe (120 packed bf16 linears): " + ", ".join(results))


if __name__ == "__main__":
    main()
