"""Seeded synthetic workloads: random token-id prompts and output lengths.

The offline protocol follows nano-vllm's `bench.py`: `random.seed(0)`, then for each sequence a
prompt of `randint(min_input_len, max_input_len)` token ids each drawn from `[0, 10000)`, then
for each sequence an output length `randint(min_output_len, max_output_len)`, `ignore_eos`.
We skip the tokenizer's special ids (SmolLM2's ids 0..16 are chat and end-of-text markers) so a
prompt never contains an end-of-turn token; everything else is the same recipe, so the same seed
gives the same workload to roseinfer and to the transformers baseline.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

MAX_TOKEN_ID = 10000  # nano-vllm draws prompt ids from [0, 10000)


@dataclass(frozen=True)
class Request:
    prompt_token_ids: list[int]
    output_len: int


def token_pool(
    vocab_size: int, special_ids: Iterable[int] = (), max_id: int = MAX_TOKEN_ID
) -> list[int]:
    """Token ids a random prompt may use: [0, min(vocab, max_id)) minus the special ids."""
    special = set(special_ids)
    pool = [i for i in range(min(vocab_size, max_id)) if i not in special]
    if not pool:
        raise ValueError("no usable token ids for random prompts")
    return pool


def length_range(length: int, range_ratio: float) -> tuple[int, int]:
    """[length * (1 - r), length * (1 + r)] as vLLM's `--random-range-ratio`, at least 1 token."""
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    if not 0.0 <= range_ratio < 1.0:
        raise ValueError(f"range ratio must be in [0, 1), got {range_ratio}")
    lo = max(1, int(length * (1 - range_ratio)))
    hi = max(lo, int(length * (1 + range_ratio)))
    return lo, hi


def random_requests(
    num_requests: int,
    input_len: tuple[int, int],
    output_len: tuple[int, int],
    pool: list[int],
    seed: int = 0,
) -> list[Request]:
    """nano-vllm's recipe: all prompts first (length, then ids), then all output lengths."""
    if num_requests < 1:
        raise ValueError(f"need at least one request, got {num_requests}")
    for name, (lo, hi) in (("input", input_len), ("output", output_len)):
        if lo < 1 or hi < lo:
            raise ValueError(f"bad {name} length range {lo}..{hi}")
    rng = random.Random(seed)
    prompts = [
        [rng.choice(pool) for _ in range(rng.randint(*input_len))] for _ in range(num_requests)
    ]
    outs = [rng.randint(*output_len) for _ in range(num_requests)]
    return [Request(p, o) for p, o in zip(prompts, outs, strict=True)]


def random_prompt_ids(rng: random.Random, length: int, pool: list[int]) -> list[int]:
    return [rng.choice(pool) for _ in range(length)]
