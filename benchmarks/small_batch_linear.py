"""The 120 linear layers of a SmolLM2-135M decode step at a few rows of x: the C++
`small_batch_linear` kernel (streams the plain bf16 weights) against oneDNN's prepacked matmul.
This is where `roseinfer.layers.linear.SMALL_BATCH_ROWS` comes from.

    .venv/bin/python benchmarks/small_batch_linear.py

Each line is the median of 7 runs of all 120 layers, the two kernels interleaved.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from roseinfer.kernels import load_cpu_kernels

H, INTER, KV, L = 576, 1536, 192, 30  # SmolLM2-135M: hidden, intermediate, kv width, layers


def median_ms(fn: Callable[[], None], runs: int = 7) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[runs // 2] * 1000


def main() -> None:
    kernels = load_cpu_kernels()
    if kernels is None:
        raise SystemExit("the C++ kernels did not build on this machine")
    torch.manual_seed(0)
    shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
    with torch.inference_mode():
        weights = [torch.randn(n, k).bfloat16() * 0.02 for n, k in shapes]
        packed = [torch.ops.mkldnn._reorder_linear_weight(w, 32) for w in weights]
        for rows in (1, 4, 6, 8, 12, 16):
            xs = {k: torch.randn(rows, k).bfloat16() for k in (H, INTER)}

            def streamed(xs=xs) -> None:
                for w in weights:
                    kernels.small_batch_linear(xs[w.shape[1]], w)

            def onednn(xs=xs) -> None:
                for w, p in zip(weights, packed, strict=True):
                    torch.ops.mkldnn._linear_pointwise(xs[w.shape[1]], p, None, "none", [], "")

            ours, theirs = [], []
            for _ in range(2):
                ours.append(median_ms(streamed))
                theirs.append(median_ms(onednn))
            print(
                f"{rows} rows: small_batch_linear {min(ours):.1f} ms, "
                f"oneDNN packed {min(theirs):.1f} ms"
            )


if __name__ == "__main__":
    main()
