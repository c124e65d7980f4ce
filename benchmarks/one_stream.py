"""One stream's decode step against the weight-read floor measured in the same moment: each
round times a `sum` of 512 MB, then `--steps` steps in a row of each mode (bf16, int8, int8 with
the int8 cache), so that the host's swings in memory speed (28-72 GB/s over a session) move both
sides of each ratio. The floor: SmolLM2's decode weights (120 linears and the LM head: 269 MB in
bf16, 134 MB in int8) at that round's `sum` bandwidth. Prints, per mode, the median step and the
median of the per-round ratios (with their quartiles) for

- the first step of each mode's turn (issue 22's one-stream goal): the other modes' weights and
  the `sum` have just gone through the caches, so every weight comes from memory; so do the
  step's code, its small tensors and the page tables, which costs 0.3-0.6 ms a step on the AMD
  host (a 512 MB read before a step: +0.45-0.65 ms; the weights' lines flushed: nothing;
  BENCHMARKS.md, session 44);
- the steps after it in the same turn (with `--steps` > 1), as a stream's steps follow each
  other when it is served alone: their weights still come from memory (flushing them from the
  caches before such a step costs bf16 nothing, int8 0-4 %), their code and small data from
  the caches (BENCHMARKS.md, sessions 41 and 44). `served_one_stream.py` times the same served.

    .venv/bin/python benchmarks/one_stream.py [--rounds 150] [--steps 4] [--context 70]
        [--model smollm2]

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
    parser.add_argument("--steps", type=int, default=4, help="steps of a mode in a row per round")
    parser.add_argument("--context", type=int, default=70)
    parser.add_argument("--model", default="smollm2", help="a model of SmolLM2-135M's shapes")
    args = parser.parse_args()
    if args.steps < 1 or args.rounds < 2:
        parser.error("--steps must be >= 1 and --rounds >= 2")
    cores = {
        mode: decoding_core(
            InferenceEngine(model=args.model, **options),
            1,
            context=args.context,
            kv_cache_dtype=kv,
            max_new_tokens=args.rounds * args.steps + 60,
        )
        for mode, (options, kv, _) in MODES.items()
    }
    a = torch.ones(128 * 1024 * 1024)
    for _ in range(10):
        for core in cores.values():
            core.step()
    # [mode][0]: the first step of each turn; [mode][1]: the median of the steps after it.
    steps: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in MODES}
    ratios: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in MODES}
    bandwidths = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        a.sum()
        bandwidth = a.numel() * 4 / (time.perf_counter() - start)
        bandwidths.append(bandwidth / 1e9)
        for mode, core in cores.items():
            times = []
            for _ in range(args.steps):
                start = time.perf_counter()
                core.step()
                times.append(time.perf_counter() - start)
            floor = WEIGHT_BYTES[MODES[mode][2]] / bandwidth
            for kind, t in enumerate(
                [times[0]] + ([statistics.median(times[1:])] if args.steps > 1 else [])
            ):
                steps[mode][kind].append(t * 1e3)
                ratios[mode][kind].append(t / floor)
    q = statistics.quantiles(bandwidths, n=4)
    print(f"read bandwidth per round: median {statistics.median(bandwidths):.1f} GB/s "
          f"(quartiles {q[0]:.1f}-{q[2]:.1f})")  # fmt: skip
    after = "the step" if args.steps == 2 else f"the {args.steps - 1} steps"
    for kind, label in enumerate(("", f" ({after} after the first, in a row)")):
        for mode in MODES:
            if not ratios[mode][kind]:
                continue
            r = statistics.quantiles(ratios[mode][kind], n=4)
            print(f"{mode}{label}: step {statistics.median(steps[mode][kind]):.2f} ms, "
                  f"{statistics.median(ratios[mode][kind]):.2f}x that round's floor "
                  f"(quartiles {r[0]:.2f}-{r[2]:.2f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
