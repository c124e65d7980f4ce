"""The 120 linear layers of a SmolLM2-135M step at 1 to 512 rows of x (decode batches and
prefill chunks): the C++ `small_batch_linear` kernel (streams the plain bf16 weights; up to 32
rows) and `amx_linear` (AMX tiles, where the CPU has them) against oneDNN's prepacked matmul.
The thresholds in `roseinfer.layers.linear` come from here.

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
        amx = kernels.amx_linear_available()
        tiles = [kernels.amx_pack_weight(w) for w in weights] if amx else []
        for rows in (1, 4, 8, 16, 32, 48, 70, 128, 256, 512):
            xs = {k: torch.randn(rows, k).bfloat16() for k in (H, INTER)}

            def streamed(xs=xs) -> None:
                for w in weights:
                    kernels.small_batch_linear(xs[w.shape[1]], w)

            def onednn(xs=xs) -> None:
                for w, p in zip(weights, packed, strict=True):
                    torch.ops.mkldnn._linear_pointwise(xs[w.shape[1]], p, None, "none", [], "")

            def on_amx(xs=xs) -> None:
                for w, t in zip(weights, tiles, strict=True):
                    kernels.amx_linear(xs[w.shape[1]], t)

            runs: dict[str, list[float]] = {"oneDNN packed": []}
            if rows <= 32:  # it streams the weights once per 8 rows: slow above
                runs["small_batch_linear"] = []
            if amx:
                runs["amx_linear"] = []
            for _ in range(2):
                if rows <= 32:
                    runs["small_batch_linear"].append(median_ms(streamed))
                runs["oneDNN packed"].append(median_ms(onednn))
                if amx:
                    runs["amx_linear"].append(median_ms(on_amx))
            print(f"{rows} rows: " + ", ".join(f"{k} {min(v):.1f} ms" for k, v in runs.items()))


if __name__ == "__main__":
    main()
