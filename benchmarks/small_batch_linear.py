"""The 120 linear layers of a SmolLM2-135M step at 1 to 512 rows of x (decode batches and
prefill chunks): the C++ `small_batch_linear` kernel (streams the plain bf16 weights; up to 32
rows) and `amx_linear` (AMX tiles, where the CPU has them) against oneDNN's prepacked matmul;
for int8 weights, `int8_linear` (vector FMAs; up to 32 rows) against `amx_int8_linear` (int8
tiles widened to bf16 for AMX) and `vnni_int8_linear` (x rounded to int8 too; AVX512-VNNI). The
thresholds in `roseinfer.layers.linear` come from here.

    .venv/bin/python benchmarks/small_batch_linear.py [--rows 1,32,512,2048]

Each figure is the better of two medians of 7 runs of all 120 layers, the kernels interleaved.
"""

from __future__ import annotations

import argparse
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
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--rows", default="1,4,8,16,32,48,70,128,256,512")
    rows_list = [int(r) for r in parser.parse_args().rows.split(",")]
    kernels = load_cpu_kernels()
    if kernels is None:
        raise SystemExit("the C++ kernels did not build on this machine")
    torch.manual_seed(0)
    shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
    with torch.inference_mode():
        weights = [torch.randn(n, k).bfloat16() * 0.02 for n, k in shapes]
        packed = [torch.ops.mkldnn._reorder_linear_weight(w, 32) for w in weights]
        amx = kernels.amx_linear_available()
        amx_int8 = kernels.amx_int8_linear_available()
        tiles = [kernels.amx_pack_weight(w) for w in weights] if amx else []
        # Weight-only int8 as `Int8Linear` quantises: one scale per output channel.
        scales = [(w.float().abs().amax(1) / 127).clamp(min=1e-8) for w in weights]
        qweights = [
            torch.round(w.float() / s[:, None]).clamp(-127, 127).to(torch.int8)
            for w, s in zip(weights, scales, strict=True)
        ]
        scales = [s.bfloat16() for s in scales]
        qtiles = [kernels.amx_pack_weight(q) for q in qweights] if amx_int8 else []
        vnni = kernels.vnni_int8_linear_available()
        vnni_weights = [kernels.vnni_pack_weight(q) for q in qweights] if vnni else []
        for rows in rows_list:
            xs = {k: torch.randn(rows, k).bfloat16() for k in (H, INTER)}
            variants: dict[str, Callable[[torch.Tensor, int], object]] = {
                "oneDNN packed": lambda x, i: torch.ops.mkldnn._linear_pointwise(
                    x, packed[i], None, "none", [], ""
                ),
            }
            if rows <= 32:  # it streams the weights once per 8 rows: slow above
                variants["small_batch_linear"] = lambda x, i: kernels.small_batch_linear(
                    x, weights[i]
                )
            if amx:
                variants["amx_linear"] = lambda x, i: kernels.amx_linear(x, tiles[i])
            if rows <= 32:
                variants["int8_linear"] = lambda x, i: kernels.int8_linear(
                    x, qweights[i], scales[i]
                )
            if amx_int8:
                variants["amx_int8_linear"] = lambda x, i: kernels.amx_int8_linear(
                    x, qtiles[i], scales[i]
                )
            if vnni:
                variants["vnni_int8_linear"] = lambda x, i: kernels.vnni_int8_linear(
                    x, vnni_weights[i], scales[i]
                )
            runs: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(2):
                for name, linear in variants.items():

                    def step(linear=linear, xs=xs) -> None:
                        for i, w in enumerate(weights):
                            linear(xs[w.shape[1]], i)

                    runs[name].append(median_ms(step))
            print(f"{rows} rows: " + ", ".join(f"{k} {min(v):.1f} ms" for k, v in runs.items()))


if __name__ == "__main__":
    main()
