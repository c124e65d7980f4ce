"""The sampler alone at one batch: median milliseconds of a call, plain and with each feature,
on random logits (scaled so that a few tokens dominate, as a model's do) and 70-token prompts.

    python benchmarks/sampler_step.py --batch-size 32 --vocab 49152

The engine's own figures (the sampler inside a generate run) are in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass

import torch

from roseinfer.config import SamplingParams
from roseinfer.layers.sampler import Sampler

CASES: dict[str, dict] = {
    "plain": {},
    "greedy": {"temperature": 0.0},
    "freq+presence": {"frequency_penalty": 0.5, "presence_penalty": 0.5},
    "repetition": {"repetition_penalty": 1.2},
    "min_p": {"min_p": 0.05},
    "logprobs 5": {"logprobs": 5},
    "logprobs 0": {"logprobs": 0},
    "issue 19's four": {"frequency_penalty": 0.5, "presence_penalty": 0.5, "min_p": 0.05,
                        "logprobs": 5},
}  # fmt: skip


@dataclass(eq=False)
class History:
    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int
    is_finished: bool = False
    bad_words_token_ids: tuple[tuple[int, ...], ...] = ()


def median_ms(params: SamplingParams, batch: int, vocab: int, steps: int, seed: int) -> float:
    gen = torch.Generator().manual_seed(seed)
    logits = [torch.randn(batch, vocab, generator=gen) * 4 for _ in range(8)]
    sampler = Sampler("cpu", seed, [0])
    seqs = [History(i, torch.randint(0, vocab, (70,), generator=gen).tolist(), 70)
            for i in range(batch)]  # fmt: skip
    times = []
    for step in range(steps):
        x = logits[step % 8].clone()
        start = time.perf_counter()
        out = sampler(x, [params] * batch, [None] * batch, [0] * batch, seqs)
        out.token_ids.tolist()
        if out.logprobs is not None:
            out.logprobs.top_ids.tolist()
        times.append(time.perf_counter() - start)
        for seq, token in zip(seqs, out.token_ids.tolist(), strict=True):
            seq.token_ids.append(token)
    return 1e3 * statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--vocab", type=int, default=49152)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    for r in range(args.rounds):
        row = []
        for name, fields in CASES.items():
            params = SamplingParams(**{"max_tokens": 128, "temperature": 1.0, **fields})
            row.append(
                f"{name} {median_ms(params, args.batch_size, args.vocab, args.steps, r):.2f}"
            )
        print(f"round {r + 1} (ms): " + ", ".join(row), flush=True)


if __name__ == "__main__":
    main()
