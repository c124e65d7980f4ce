"""The engine loop: schedule -> run the batch -> process the outputs.

`LLMEngine` owns one KV cache (model runner), one block manager and one scheduler. Front ends
(`OnlineScheduler`, `OfflineScheduler`, `LLM`, the server) submit token ids and read
`StepOutput`s; they never reach into the scheduler's state.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.model_runner import ModelRunner, num_blocks_for_budget
from roseinfer.engine.scheduler import Scheduler
from roseinfer.engine.sequence import Sequence
from roseinfer.loader import LoadedModel

logger = logging.getLogger(__name__)


class InvalidRequestError(ValueError):
    """A request the engine refuses at submission; nothing else is disturbed."""


def check_prompt_ids(prompt_token_ids: list[int], vocab_size: int) -> None:
    if not prompt_token_ids:
        raise InvalidRequestError("prompt is empty")
    if any(
        isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < vocab_size
        for t in prompt_token_ids
    ):
        raise InvalidRequestError(f"prompt token ids must be integers in [0, {vocab_size})")


@dataclass(frozen=True)
class StepOutput:
    seq: Sequence
    token_id: int
    finished: bool


@dataclass(frozen=True)
class EngineStats:
    num_running: int
    num_waiting: int
    num_used_blocks: int
    num_blocks: int
    prefix_hit_rate: float
    num_batched_tokens: int = 0
    num_prefill_tokens: int = 0
    num_preempted: int = 0


class LLMEngine:
    def __init__(self, loaded: LoadedModel, config: EngineConfig) -> None:
        self.config = config
        self.tokenizer = loaded.tokenizer
        self.model_config = mc = loaded.model_config
        self.max_model_len = min(
            config.max_model_len or mc.max_position_embeddings, mc.max_position_embeddings
        )
        num_blocks = config.num_kv_blocks or num_blocks_for_budget(
            mc, config.block_size, loaded.dtype, config.kv_cache_memory, config.kv_cache_dtype
        )
        self.stop_token_ids = frozenset(self.tokenizer.stop_token_ids)
        self.runner = ModelRunner(loaded, config, num_blocks)
        self.block_manager = BlockManager(num_blocks, config.block_size, config.enable_prefix_cache)
        self.scheduler = Scheduler(
            self.block_manager,
            config.max_num_seqs,
            config.max_num_batched_tokens,
            self.max_model_len,
        )
        self._next_seq_id = 0
        self.last_step = EngineStats(0, 0, 0, num_blocks, 0.0)
        logger.info(
            "KV cache: %d blocks x %d tokens = %d tokens (%s)",
            num_blocks,
            config.block_size,
            self.runner.capacity_tokens,
            "int8" if config.kv_cache_dtype == "int8" else loaded.dtype,
        )

    def add_request(self, prompt_token_ids: list[int], params: SamplingParams) -> Sequence:
        self.validate(prompt_token_ids, params)
        seq = Sequence(self._next_seq_id, list(prompt_token_ids), len(prompt_token_ids), params)
        self._next_seq_id += 1
        self.scheduler.add(seq)
        return seq

    def validate(self, prompt_token_ids: list[int], params: SamplingParams) -> None:
        """Raise InvalidRequestError for a request this engine can never serve."""
        check_prompt_ids(prompt_token_ids, self.model_config.vocab_size)
        try:
            self.scheduler.check_fits(len(prompt_token_ids), params.max_new_tokens)
        except ValueError as e:
            raise InvalidRequestError(str(e)) from None

    def abort(self, seq: Sequence, reason: str = "abort") -> None:
        """Stop a sequence now (client gone, stop string seen): its blocks are freed at once."""
        self.scheduler.finish(seq, reason)

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished()

    def step(self) -> list[StepOutput]:
        batch = self.scheduler.schedule()
        tokens = self.runner.run(batch.scheduled) if batch.scheduled else []
        self.scheduler.on_computed(batch)
        outputs = self._process(batch.scheduled, tokens)
        self.last_step = self.stats(
            batch.num_batched_tokens, batch.num_prefill_tokens, len(batch.preempted)
        )
        return outputs

    def stats(
        self, num_batched_tokens: int = 0, num_prefill_tokens: int = 0, num_preempted: int = 0
    ) -> EngineStats:
        bm = self.block_manager
        return EngineStats(
            num_running=len(self.scheduler.running),
            num_waiting=self.scheduler.num_waiting,
            num_used_blocks=bm.num_used_blocks,
            num_blocks=bm.num_blocks,
            prefix_hit_rate=bm.prefix_hit_rate,
            num_batched_tokens=num_batched_tokens,
            num_prefill_tokens=num_prefill_tokens,
            num_preempted=num_preempted,
        )

    def _process(self, scheduled: list, tokens: list[int]) -> list[StepOutput]:
        now = time.perf_counter()
        outputs = []
        sampling = (s.seq for s in scheduled if s.samples)
        for seq, token in zip(sampling, tokens, strict=True):
            seq.token_ids.append(token)
            if seq.first_token_time is None:
                seq.first_token_time = now
            reason = self._stop_reason(seq, token)
            if reason is not None:
                self.scheduler.finish(seq, reason)
            outputs.append(StepOutput(seq, token, reason is not None))
        return outputs

    def _stop_reason(self, seq: Sequence, token: int) -> str | None:
        p = seq.params
        n = seq.num_output_tokens
        if n >= p.min_tokens and (
            (p.stop_on_eos and token in self.stop_token_ids) or token in p.stop_token_ids
        ):
            return "stop"
        if n >= p.max_new_tokens or len(seq) >= self.max_model_len:
            return "length"
        return None
