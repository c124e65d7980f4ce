"""One stream's decode step against the weight-read floor measured in the same moment: each
round times one step of each mode (bf16, int8, int8 with the int8 cache) and a `sum` of 512 MB,
so that the host's swings in memory speed (28-61 GB/s over a session) move both sides of each
ratio. The floor: SmolLM2's decode weights (120 linears and the LM head: 269 MB in bf16, 134 MB
in int8) at that round's `sum` bandwidth. Prints each mode's median step, the median of the
per-round ratios, and their quartiles.

    .venv/bin/python benchmarks/one_stream.py [--rounds 150] [--context 70] [--model smollm2]

(`--model` takes any model of SmolLM2-135M's shapes, such as session 33's random-weight
`docs/bench/session33/smol_shaped.py`: the floor counts SmolLM2's bytes.)

(docs/bench/session25/one_stream.py measures the floor once, before the engines, and adds the
kernels' own streams; the host's mood can change in between.)
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from decoding import decoding_core

from roseinfer.engine import InferenceEngine

H, INTER, KV, L, V = 576, 1536, 192, 30, 49152  # SmolLM2-135M: hidden, MLP, kv width, layers, vocab
WEIGHTS = L * ((H + 2 * KV) * H + H * H + 2 * INTER * H + H * INTER) + V * H  # + the LM head
WEIGHT_BYTES = {"bf16": 2 * WEIGHTS, "int8": WEIGHTS}
MODES = {
    "bf16": ({"dtype": "bfloat16"}, "auto", "bf16"),
    "int8": ({"quantization": "int8"}, "auto", "int8"),
    "int8+kv8": ({"quantization": "int8"}, "int8", "int8"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--context", type=int, default=70)
    parser.add_argument("--model", default="smollm2", help="a model of SmolLM2-135M's shapes")
    args = parser.parse_args()
    cores = {
        mode: decoding_core(
            InferenceEngine(model=args.model, **options),
            1,
            context=args.context,
            kv_cache_dtype=kv,
            max_new_tokens=args.rounds + 60,
        )
        for mode, (options, kv, _) in MODES.items()
    }
    a = torch.ones(128 * 1024 * 1024)
    for _ in range(10):
        for core in cores.values():
            core.step()
    steps: dict[str, list[float]] = {m: [] for m in MODES}
    ratios: dict[str, list[float]] = {m: [] for m in MODES}
    bandwidths = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        a.sum()
        bandwidth = a.numel() * 4 / (time.perf_counter() - start)
        bandwidths.append(bandwidth / 1e9)
        for mode, core in cores.items():
            start = time.perf_counter()
            core.step()
            t = time.perf_counter() - start
            steps[mode].append(t * 1e3)
            ratios[mode].append(t / (WEIGHT_BYTES[MODES[mode][2]] / bandwidth))
    q = statistics.quantiles(bandwidths, n=4)
    print(f"read bandwidth per round: median {statistics.median(bandwidths):.1f} GB/s "
          f"(quartiles {q[0]:.1f}-{q[2]:.1f})")  # fmt: skip
    for mode in MODES:
        r = statistics.quantiles(ratios[mode], n=4)
        print(f"{mode}: step {statistics.median(steps[mode]):.2f} ms, "
              f"{statistics.median(ratios[mode]):.2f}x that round's floor "
              f"(quartiles {r[0]:.2f}-{r[2]:.2f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
