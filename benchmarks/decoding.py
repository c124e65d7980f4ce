"""Shared by the step benchmarks: an engine core whose sequences all decode one token per step."""

from __future__ import annotations

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
from roseinfer.engine.llm_engine import LLMEngine


def decoding_core(
    engine: InferenceEngine,
    batch_size: int,
    context: int = 70,
    kv_cache_memory: float = 0.25,
    max_new_tokens: int = 500,
) -> LLMEngine:
    """`batch_size` sequences with distinct `context`-token prompts, prefilled, now decoding."""
    core = engine.new_core(kv_cache_memory=kv_cache_memory, max_num_seqs=max(64, batch_size))
    params = SamplingParams(max_new_tokens=max_new_tokens, stop_on_eos=False, do_sample=False)
    for i in range(batch_size):
        core.add_request([100 + (i + j) % 1000 for j in range(context)], params)
    while len(core.step()) < batch_size:
        pass  # prefill until every sequence decodes one token per step
    return core
