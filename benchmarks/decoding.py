"""Shared by the step benchmarks: an engine core whose sequences all decode one token per step,
and the median step time of several such cores measured in turns."""

from __future__ import annotations

import statistics
import time
from collections.abc import Hashable

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
from roseinfer.engine.llm_engine import LLMEngine


def decoding_core(
    engine: InferenceEngine,
    batch_size: int,
    context: int = 70,
    kv_cache_memory: float | None = None,
    max_new_tokens: int = 500,
    kv_cache_dtype: str = "auto",
) -> LLMEngine:
    """`batch_size` sequences with distinct `context`-token prompts, prefilled, now decoding.

    The KV cache holds exactly what the sequences need (`max_new_tokens` each) unless
    `kv_cache_memory` (GiB) sets it. A budget too small for them, or a `max_new_tokens` that
    ends the first sequences before the last have prefilled, is refused: no step would ever
    decode them all."""
    block_size = engine.config.block_size
    needed_blocks = batch_size * -(-(context + max_new_tokens) // block_size)
    sizing: dict[str, float | int] = (
        {"num_kv_blocks": needed_blocks}
        if kv_cache_memory is None
        else {"kv_cache_memory": kv_cache_memory}
    )
    core = engine.new_core(
        max_num_seqs=max(64, batch_size), kv_cache_dtype=kv_cache_dtype, **sizing
    )
    num_blocks = core.stats().num_blocks
    if num_blocks < needed_blocks:
        raise ValueError(
            f"{batch_size} sequences of {context} + {max_new_tokens} tokens need {needed_blocks} "
            f"KV blocks; kv_cache_memory={kv_cache_memory} GiB holds {num_blocks}"
        )
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0, ignore_eos=True)
    for i in range(batch_size):
        core.add_request(str(i), [100 + (i + j) % 1000 for j in range(context)], params)
    while True:  # prefill until every sequence decodes one token per step
        outputs = core.step()
        if len(outputs) == batch_size:
            return core
        if any(out.finished for out in outputs):
            # The first sequences would finish while the last ones still prefill: no step
            # would ever decode them all.
            raise ValueError(
                f"max_new_tokens={max_new_tokens} ends sequences before all {batch_size} "
                "have prefilled; raise it"
            )


def interleaved_step_medians(cores: dict[Hashable, LLMEngine], steps: int) -> dict[Hashable, float]:
    """Median seconds per step of each core, the cores taking turns step by step: a host that
    slows down mid-run slows them all alike, so their ratios hold."""
    times: dict[Hashable, list[float]] = {key: [] for key in cores}
    for _ in range(steps):
        for key, core in cores.items():
            start = time.perf_counter()
            core.step()
            times[key].append(time.perf_counter() - start)
    return {key: statistics.median(ts) for key, ts in times.items()}
