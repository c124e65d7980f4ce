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
    kv_cache_memory: float = 0.25,
    max_new_tokens: int = 500,
    kv_cache_dtype: str = "auto",
) -> LLMEngine:
    """`batch_size` sequences with distinct `context`-token prompts, prefilled, now decoding."""
    core = engine.new_core(
        kv_cache_memory=kv_cache_memory,
        max_num_seqs=max(64, batch_size),
        kv_cache_dtype=kv_cache_dtype,
    )
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0, ignore_eos=True)
    for i in range(batch_size):
        core.add_request(str(i), [100 + (i + j) % 1000 for j in range(context)], params)
    while len(core.step()) < batch_size:
        pass  # prefill until every sequence decodes one token per step
    return core


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
