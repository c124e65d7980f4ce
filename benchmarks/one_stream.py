"""One stream's decode step against the weight-read floor measured in the same moment: each
round, for each mode in turn (bf16, int8, int8 with the int8 cache), times a `sum` of 512 MB,
then `--steps` steps in a row of that mode, so that the host's swings in memory speed (28-72 GB/s
over a session) move both sides of each ratio. The floor: SmolLM2's decode weights (120 linears
and the LM head: 269 MB in bf16, 134 MB in int8) at the bandwidth of the `sum` just before.
Prints, per mode, the median step and the median of the per-round ratios (with their quartiles)
for

- the first step of each mode's turn (issue 22's one-stream goal): the `sum` has just gone
  through the caches, so every weight comes from memory; so do the
  step's code, its small tensors and the page tables, which costs 0.3-0.6 ms a step on the AMD
  host (a 512 MB read before a step: +0.45-0.65 ms; the weights' lines flushed: nothing;
  BENCHMARKS.md, session 44);
- the steps after it in the same turn (with `--steps` > 1), as a stream's steps follow each
  other when it is served alone: their weights still come from memory (flushing them from the
  caches before such a step costs bf16 nothing, int8 0-4 %), their code and small data from
  the caches (BENCHMARKS.md, sessions 41 and 44). `served_one_stream.py` times the same served.

    .venv/bin/python benchmarks/one_stream.py [--rounds 150] [--steps 4] [--context 70]
        [--window 64] [--model smollm2]

Each mode's sequence holds between `--context` and `--context` + `--window` tokens: it starts
over (a new one, prefilled, two steps untimed) before a round would take it past that. The floor
counts the weights only, and a step also reads its sequence's KV cache, which grows by a token a
step: run on one sequence, the 150 rounds' contexts went from 80 to 680 tokens, and at 600 the
first step took bf16 +0.6 ms, int8 +1.0-1.4 ms, int8 with the int8 cache +0.7-1.1 ms more than at
70 (1.04 / 1.12-1.16 / 1.07-1.09x the floor against 1.12 / 1.32-1.37 / 1.21x; BENCHMARKS.md,
session 62).

(`--model` takes any model of SmolLM2-135M's shapes, such as session 33's random-weight
`docs/bench/session33/smol_shaped.py`: the floor counts SmolLM2's bytes.)

Each round also times what handing a loop between the kernels' two threads costs
(`region_handoff_ns`). On the AMD host it is either ~0.12-0.2 µs, with the `sum` at ~45 GB/s,
or ~0.6-0.85 µs, with the `sum` at ~70 GB/s: by that evidence the two CPUs share one core complex
(one link to memory) or sit on two (two links, and every handoff crosses between them), as the
host places them, minutes at a time. A step's ~150 loops pay it each, so the ratios are printed
for the rounds of each kind too where a run saw both (BENCHMARKS.md, session 45).

(docs/bench/session25/one_stream.py measures the floor once, before the engines, and adds the
kernels' own streams; the host's mood can change in between.)
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

import torch
from decoding import decoding_core

from roseinfer.bench.machine import region_handoff_us
from roseinfer.engine import InferenceEngine, LLMEngine

H, INTER, KV, L, V = 576, 1536, 192, 30, 49152  # SmolLM2-135M: hidden, MLP, kv width, layers, vocab
WEIGHTS = L * ((H + 2 * KV) * H + H * H + 2 * INTER * H + H * INTER) + V * H  # + the LM head
WEIGHT_BYTES = {"bf16": 2 * WEIGHTS, "int8": WEIGHTS}
# Handoffs at or above this many µs: the two CPUs on two core complexes (AMD host; see above).
FAR_HANDOFF_US = 0.45
FIRST_STEPS = 2  # untimed steps of a new sequence (the first decode steps after its prefill)
MODES = {
    "bf16": ({"dtype": "bfloat16"}, "auto", "bf16"),
    "int8": ({"quantization": "int8"}, "auto", "int8"),
    "int8+kv8": ({"quantization": "int8"}, "int8", "int8"),
}


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--steps", type=int, default=4, help="steps of a mode in a row per round")
    parser.add_argument("--context", type=int, default=70)
    parser.add_argument(
        "--window", type=int, default=64, help="tokens a sequence decodes before it starts over"
    )
    parser.add_argument("--model", default="smollm2", help="a model of SmolLM2-135M's shapes")
    args = parser.parse_args()
    if args.steps < 1 or args.rounds < 2:
        parser.error("--steps must be >= 1 and --rounds >= 2")
    if args.window < FIRST_STEPS + args.steps:
        parser.error(f"--window must be >= {FIRST_STEPS} + --steps")
    engines = {
        mode: InferenceEngine(model=args.model, **options)
        for mode, (options, _, _) in MODES.items()
    }

    def new_sequence(mode: str) -> LLMEngine:
        """A new sequence of `--context` tokens for `mode`, prefilled, its first steps taken."""
        core = decoding_core(
            engines[mode],
            1,
            context=args.context,
            kv_cache_dtype=MODES[mode][1],
            max_new_tokens=args.window + 1,
        )
        for _ in range(FIRST_STEPS):
            core.step()
        return core

    cores = {mode: new_sequence(mode) for mode in MODES}
    a = torch.ones(128 * 1024 * 1024)
    warm = 10  # steps, once: the code and the caches' allocations
    for _ in range(warm):
        for core in cores.values():
            core.step()
    decoded = dict.fromkeys(MODES, FIRST_STEPS + warm)
    rounds = []
    for _ in range(args.rounds):
        for mode in MODES:  # the context held in [context, context + window]
            if decoded[mode] + args.steps > args.window:
                del cores[mode]  # its KV cache freed before the next is made
                cores[mode] = new_sequence(mode)
                decoded[mode] = FIRST_STEPS
            decoded[mode] += args.steps
        handoff = region_handoff_us()  # the engines above loaded the kernels
        bandwidth: dict[str, float] = {}
        times: dict[str, list[float]] = {}
        for mode, core in cores.items():
            start = time.perf_counter()
            a.sum()
            bandwidth[mode] = a.numel() * 4 / (time.perf_counter() - start)
            times[mode] = []
            for _ in range(args.steps):
                start = time.perf_counter()
                core.step()
                times[mode].append(time.perf_counter() - start)
        rounds.append(Round(handoff, bandwidth, times))
    report(rounds, args.steps)
    handoffs = [r.handoff_us for r in rounds if r.handoff_us is not None]
    if len(handoffs) < len(rounds):  # no kernels, or no region (one thread, more than the CPUs)
        return
    q = statistics.quantiles(handoffs, n=4)
    print(f"handoff between the threads per round: median {statistics.median(handoffs):.2f} µs "
          f"(quartiles {q[0]:.2f}-{q[2]:.2f})")  # fmt: skip
    near = [r for r in rounds if r.handoff_us is not None and r.handoff_us < FAR_HANDOFF_US]
    far = [r for r in rounds if r.handoff_us is not None and r.handoff_us >= FAR_HANDOFF_US]
    if len(near) >= 2 and len(far) >= 2:
        for label, kind in (
            (f"below {FAR_HANDOFF_US} µs", near),
            (f"{FAR_HANDOFF_US} µs or more", far),
        ):
            print(f"rounds whose handoff was {label}: {len(kind)}")
            report(kind, args.steps, indent="  ")


@dataclass(frozen=True)
class Round:
    handoff_us: float | None  # `region_handoff_us()` before the first `sum`; None: no region
    bandwidth: dict[str, float]  # per mode, the bytes per second of the `sum` before its turn
    times: dict[str, list[float]]  # per mode, its steps' seconds in turn order


def report(rounds: list[Round], steps: int, indent: str = "") -> None:
    """Per mode, the first step of each round and the median of the steps after it: the median
    step and the median (quartiles) of each round's ratio to its floor."""
    bandwidths = [b / 1e9 for r in rounds for b in r.bandwidth.values()]
    q = statistics.quantiles(bandwidths, n=4)
    print(f"{indent}read bandwidth per `sum`: median {statistics.median(bandwidths):.1f} GB/s "
          f"(quartiles {q[0]:.1f}-{q[2]:.1f})")  # fmt: skip
    after = "the step" if steps == 2 else f"the {steps - 1} steps"
    for kind, label in enumerate(("", f" ({after} after the first, in a row)")):
        if kind == 1 and steps == 1:
            continue
        for mode in MODES:
            ms, ratios = [], []
            for r in rounds:
                t = r.times[mode][0] if kind == 0 else statistics.median(r.times[mode][1:])
                ms.append(t * 1e3)
                ratios.append(t * r.bandwidth[mode] / WEIGHT_BYTES[MODES[mode][2]])
            q = statistics.quantiles(ratios, n=4)
            print(f"{indent}{mode}{label}: step {statistics.median(ms):.2f} ms, "
                  f"{statistics.median(ratios):.2f}x that round's floor "
                  f"(quartiles {q[0]:.2f}-{q[2]:.2f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
