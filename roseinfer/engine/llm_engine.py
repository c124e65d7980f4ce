"""The engine loop: schedule -> run the batch -> process the outputs.

`LLMEngine` owns one KV cache (model runner), one block manager and one scheduler, and the one
request table: a request id maps to its `n` sequences (one per choice, each with its own seed).
Front doors (`LLM`, `EngineClient`, the seeds' wrappers) submit token ids under a request id
and read `StepOutput`s; they never reach into the scheduler's state.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Sequence as Seq
from dataclasses import dataclass

import torch

from roseinfer.config import EngineConfig
from roseinfer.engine.bad_words import BadWordIds, BadWords
from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.dry_breakers import DryBreakerTable
from roseinfer.engine.model_runner import (
    ModelRunner,
    RunnerOutput,
    SampledToken,
    SampleFailure,
    num_blocks_for_budget,
)
from roseinfer.engine.requests import InvalidRequestError, check_prompt_ids, context_length
from roseinfer.engine.scheduler import ContextLengthError, Scheduler
from roseinfer.engine.sequence import ScheduledSequence, Sequence
from roseinfer.loader import LoadedModel
from roseinfer.outputs import FinishReason, TokenLogprobs
from roseinfer.pooling_params import PoolingParams
from roseinfer.sampling_params import SamplingDefaults, SamplingParams
from roseinfer.structured.grammar import GrammarCompiler, GrammarError, grammar_failure

logger = logging.getLogger(__name__)

# An embedding request's SamplingParams: what bounds its sequence (it never generates).
_POOLING_BOUND = SamplingParams(max_tokens=1)


@dataclass(frozen=True, slots=True)
class StepOutput:
    """One new token of one choice, or an embedding request's result; `finish_reason` is set
    on the choice's last one."""

    request_id: str
    index: int  # the choice, of the request's n
    token_id: int | None  # None when the choice failed (finish_reason "error"), or pooled
    finish_reason: FinishReason | None
    num_cached_tokens: int  # prompt tokens the prefix cache served this choice
    error: str | None = None  # why the choice failed
    logprobs: TokenLogprobs | None = None  # with SamplingParams.logprobs
    # With SamplingParams.prompt_logprobs, on the choice's first token: prompt tokens 1.. on
    # (every choice computes them, so each choice's first output has them).
    prompt_logprobs: tuple[TokenLogprobs, ...] | None = None
    invalid_request: bool = False  # the failure was the request's own doing (a 400, not a 500)
    # An embedding request's result ([hidden] float32, CPU; finish reason "stop").
    embedding: torch.Tensor | None = None

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass(frozen=True)
class EngineStats:
    num_running: int
    num_waiting: int
    num_used_blocks: int
    num_blocks: int
    prefix_hit_rate: float
    num_batched_tokens: int = 0  # this step's (0 where no step is meant)
    num_prefill_tokens: int = 0
    num_preempted: int = 0
    num_preemptions_total: int = 0  # since the engine started


class LLMEngine:
    def __init__(self, loaded: LoadedModel, config: EngineConfig) -> None:
        """`config`'s load-time fields are `loaded`'s (`LoadedModel.engine_config`: those set
        otherwise are refused); `self.config` is what runs, `max_model_len` resolved."""
        config = loaded.engine_config(config)
        self.model_name = loaded.name
        self.tokenizer = loaded.tokenizer
        self.model_config = mc = loaded.model_config
        self.max_model_len = context_length(config, mc)
        self.config = config = dataclasses.replace(config, max_model_len=self.max_model_len)
        num_blocks = config.num_kv_blocks or num_blocks_for_budget(
            mc, config.block_size, loaded.dtype, config.kv_cache_memory, config.kv_cache_dtype
        )
        self.stop_token_ids = frozenset(self.tokenizer.stop_token_ids)
        self._generation_config = loaded.generation_config
        self._generation_config_origin = loaded.generation_config_origin
        self.grammars = GrammarCompiler(self.tokenizer, mc.vocab_size)
        self.bad_words = BadWords(self.tokenizer)
        self.dry_breakers = DryBreakerTable(self.tokenizer)
        self.runner = ModelRunner(loaded, config, num_blocks)
        if self.max_total_tokens < self.max_model_len:  # (vLLM refuses to start)
            logger.warning("the KV cache holds %d tokens, fewer than max_model_len %d: a sequence "
                           "is held to them", self.max_total_tokens, self.max_model_len)  # fmt: skip
        self.block_manager = BlockManager(num_blocks, config.block_size, config.enable_prefix_cache)
        self.scheduler = Scheduler(self.block_manager, config.max_num_seqs,
                                   config.max_num_batched_tokens, self.max_model_len,
                                   config.lone_prefill_tokens)  # fmt: skip
        self._requests: dict[str, list[Sequence]] = {}  # unfinished requests, by request id
        self._next_seq_id = 0
        self._num_preemptions = 0
        self.last_step = EngineStats(0, 0, 0, num_blocks, 0.0)
        logger.info("KV cache: %d blocks x %d tokens = %d tokens (%s)", num_blocks,
                    config.block_size, self.runner.capacity_tokens,
                    "int8" if config.kv_cache_dtype == "int8" else loaded.dtype)  # fmt: skip

    # ---- requests ------------------------------------------------------------------------
    def add_request(
        self, request_id: str, prompt_token_ids: Seq[int], params: SamplingParams
    ) -> None:
        """Queue a request's `params.n` choices. Bad input raises InvalidRequestError (a
        ValueError) and queues nothing."""
        if request_id in self._requests:
            raise InvalidRequestError(f"request id {request_id!r} is already running")
        self.validate(prompt_token_ids, params)
        bad_words = self.bad_words.token_ids(params.bad_words)  # once for the n choices
        bm = self.block_manager
        # The others wait for choice 0's prompt where that pays: the prefix cache then serves
        # them its full blocks; and its prompt logprobs (the request's, computed by it alone)
        # reach the client before any other choice's first token (a streamed echo needs them).
        wait = params.prompt_logprobs is not None or (
            bm.enable_prefix_cache and len(prompt_token_ids) > bm.block_size
        )
        seqs: list[Sequence] = []
        for i in range(params.n):
            choice = params.for_choice(i, params.prompt_logprobs if i == 0 else None)
            seq = self.new_sequence(prompt_token_ids, choice, request_id, i, bad_words)
            seq.prompt_leader = seqs[0] if seqs and wait else None
            seqs.append(seq)
        self._requests[request_id] = seqs
        for seq in seqs:
            self.scheduler.add(seq)

    def add_pooling_request(
        self, request_id: str, prompt_token_ids: Seq[int], pooling: PoolingParams
    ) -> None:
        """Queue an embedding request: one `StepOutput` with its `embedding` once its prompt
        is computed. Bad input raises InvalidRequestError and queues nothing."""
        if request_id in self._requests:
            raise InvalidRequestError(f"request id {request_id!r} is already running")
        if not isinstance(pooling, PoolingParams):
            raise TypeError(f"pooling must be a PoolingParams, got {type(pooling).__name__}")
        self.validate_pooling(prompt_token_ids)
        seq = self.new_sequence(prompt_token_ids, _POOLING_BOUND, request_id)
        seq.pooling = pooling
        self._requests[request_id] = [seq]
        self.scheduler.add(seq)

    def new_sequence(
        self,
        prompt_token_ids: Seq[int],
        params: SamplingParams,
        request_id: str = "",
        index: int = 0,
        bad_words: BadWordIds | None = None,
    ) -> Sequence:
        """One choice's sequence, with what its params need beside the tokens (its bad words
        tokenized, unless the caller has them: `bad_words`; its DRY breakers as token ids; its
        grammar's state)."""
        ids = list(prompt_token_ids)
        seq = Sequence(self._next_seq_id, ids, len(ids), params, request_id, index)
        self._next_seq_id += 1
        if bad_words is None:
            bad_words = self.bad_words.token_ids(params.bad_words)
        seq.bad_words_token_ids = bad_words
        if params.dry is not None and params.uses_dry:
            seq.dry_breakers = self.dry_breakers.of(params.dry.sequence_breakers)
        if params.structured_outputs is not None:
            seq.matcher = self.grammars.matcher(params.structured_outputs)
        return seq

    @functools.cached_property
    def sampling_defaults(self) -> SamplingDefaults:
        """What a request that leaves a sampling field out gets. Read by the front doors that
        let one (the server at start, `LLM` when built), so a file that only they would read
        cannot stop the seeds' classes, which set every field."""
        return SamplingDefaults.of_model(self._generation_config, self.config.generation_config,
                                         self._generation_config_origin)  # fmt: skip

    @property
    def max_total_tokens(self) -> int:
        """The most tokens one sequence may hold, prompt and output: the context, or the KV
        cache where it is smaller."""
        return min(self.max_model_len, self.runner.capacity_tokens)

    def validate(self, prompt_token_ids: Seq[int], params: SamplingParams) -> None:
        """Raise InvalidRequestError for a request this engine can never serve (reads
        constants only, so any thread may call it)."""
        check_prompt_ids(prompt_token_ids, self.model_config.vocab_size)
        vocab = self.model_config.vocab_size
        for name in ("logit_bias", "allowed_token_ids", "stop_token_ids", "logprob_token_ids"):
            ids = getattr(params, name)  # dict keys for logit_bias
            if ids and max(ids) >= vocab:  # the sampler would index past the logits
                raise InvalidRequestError(
                    f"{name} must be token ids in [0, {vocab}), got {max(ids)}", name
                )
        if (budget := params.thinking_budget) is not None:
            if max(budget.open_ids + budget.close_ids + budget.message_ids) >= vocab:
                raise InvalidRequestError(f"thinking_budget's tags must be token ids in "
                                          f"[0, {vocab})", "thinking_budget")  # fmt: skip
        if params.allowed_token_ids:
            # allowed_token_ids that the sampler's other masks empty at the first token (it
            # would fail there): all stop tokens while min_tokens > 0 (masked before min_tokens,
            # the model's whether or not ignore_eos), or all one-token bad words (always banned).
            # Grammars are left to the sampler: deciding them costs a compile.
            banned: set[int] = set()
            reasons = []
            if params.min_tokens > 0:
                banned |= self.stop_token_ids | set(params.stop_token_ids)
                reasons.append(f"stop tokens are masked before min_tokens ({params.min_tokens})")
            if params.bad_words:
                words = self.bad_words.token_ids(params.bad_words)
                banned |= {word[0] for word in words if len(word) == 1}
                reasons.append("one-token bad_words are never generated")
            if set(params.allowed_token_ids) <= banned:
                raise InvalidRequestError(
                    f"allowed_token_ids leave no token to generate: {' and '.join(reasons)}",
                    "allowed_token_ids",
                )
        if params.structured_outputs is not None:
            try:
                self.grammars.check(params.structured_outputs)
            except GrammarError as e:
                raise InvalidRequestError(
                    f"structured_outputs: {e}", "structured_outputs"
                ) from None
        # The prompt alone (with one token to generate) first: if it does not fit, max_tokens
        # is not the field at fault.
        for num_new_tokens, param in ((1, "prompt"), (params.max_tokens, "max_tokens")):
            try:
                self.scheduler.check_fits(len(prompt_token_ids), num_new_tokens)
            except ContextLengthError as e:
                raise InvalidRequestError(str(e), param, "context_length_exceeded") from None
            except ValueError as e:
                raise InvalidRequestError(str(e), param) from None

    def validate_pooling(self, prompt_token_ids: Seq[int]) -> None:
        """Raise InvalidRequestError for an embedding request this engine can never serve: a
        prompt may fill the context, as nothing follows it."""
        check_prompt_ids(prompt_token_ids, self.model_config.vocab_size)
        n, limit, bm = len(prompt_token_ids), self.max_model_len, self.block_manager
        if n > limit:
            raise InvalidRequestError(f"This model's maximum context length is {limit} tokens. "
                                      f"However, the input has {n} tokens",
                                      "prompt", "context_length_exceeded")  # fmt: skip
        if bm.blocks_needed(n) > bm.num_blocks:
            cache = f"{bm.num_blocks} ({bm.num_blocks * bm.block_size} tokens)"
            raise InvalidRequestError(f"the input ({n} tokens) needs {bm.blocks_needed(n)} KV "
                                      f"blocks; the cache has {cache}", "prompt")  # fmt: skip

    def abort_request(
        self, request_id: str, reason: FinishReason = "abort", index: int | None = None
    ) -> None:
        """Finish a request's choices now (or only choice `index`): their blocks are freed at
        once. Unknown or finished ids are ignored."""
        seqs = self._requests.get(request_id)
        if seqs is None:
            return
        for seq in seqs:
            if index is None or seq.index == index:
                self.scheduler.finish(seq, reason)
        self._forget_if_done(request_id, seqs)

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished()

    def sequences(self, request_id: str) -> list[Sequence]:
        """The choices of an unfinished request, to read only ([] once it finished)."""
        return list(self._requests.get(request_id, ()))

    @property
    def num_requests(self) -> int:
        return len(self._requests)

    # ---- the loop ------------------------------------------------------------------------
    def step(self) -> list[StepOutput]:
        batch = self.scheduler.schedule()
        result = self.runner.run(batch.scheduled) if batch.scheduled else RunnerOutput([], [])
        self.scheduler.on_computed(batch)
        outputs = self._process(batch.scheduled, result)
        self._num_preemptions += len(batch.preempted)
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
            num_preemptions_total=self._num_preemptions,
        )

    def _process(
        self, scheduled: list[ScheduledSequence], result: RunnerOutput
    ) -> list[StepOutput]:
        """Each sampled token appended and checked; a choice whose step failed (its sampling,
        its prompt logprobs, its grammar) ends alone with reason "error"."""
        now = time.perf_counter()
        failed: dict[int, SampleFailure] = {}  # by seq_id
        for s, records in zip(scheduled, result.prompt_logprobs, strict=True):
            if isinstance(records, SampleFailure):
                failed[s.seq.seq_id] = records
            else:
                s.seq.prompt_logprobs += records
        outputs = []
        pooling = (s.seq for s in scheduled if s.pools)
        for seq, embedding in zip(pooling, result.embeddings, strict=True):
            if isinstance(embedding, SampleFailure):
                failed[seq.seq_id] = embedding
                continue
            try:
                outputs.append(self._pooled(seq, embedding))
            except Exception as e:  # a bug in one request's bookkeeping: it fails alone
                logger.exception("request %s failed after pooling", seq.request_id)
                failed[seq.seq_id] = SampleFailure.of(e, "finishing the embedding")
        sampling = (s.seq for s in scheduled if s.samples)
        for seq, sampled in zip(sampling, result.sampled, strict=True):
            if isinstance(sampled, SampleFailure):
                failed.setdefault(seq.seq_id, sampled)
                continue
            if seq.seq_id in failed:
                continue
            try:
                outputs.append(self._advance(seq, sampled, now))
            except GrammarError as e:
                failed[seq.seq_id] = SampleFailure(str(e), invalid_request=True)
            except Exception as e:  # a bug in one choice's bookkeeping (its grammar's)
                logger.exception("request %s failed after sampling", seq.request_id)
                failed[seq.seq_id] = SampleFailure.of(e, "processing the token")
        for s in scheduled:
            if s.seq.seq_id in failed:
                outputs.append(self._fail(s.seq, failed[s.seq.seq_id]))
        return outputs

    def _advance(self, seq: Sequence, sampled: SampledToken, now: float) -> StepOutput:
        """Append a choice's new token; finish it if the token ends it."""
        token = sampled.token_id
        if seq.first_token_time is None:
            seq.first_token_time = now
        reason = self.append_token(seq, token)
        if reason is not None:
            self.scheduler.finish(seq, reason)
            self._forget_if_done(seq.request_id, self._requests.get(seq.request_id, ()))
        prompt_logprobs = None
        if seq.params.prompt_logprobs is not None and seq.num_output_tokens == 1:
            prompt_logprobs = tuple(seq.prompt_logprobs)
        return StepOutput(
            seq.request_id,
            seq.index,
            token,
            reason,
            seq.num_cached_tokens,
            None,
            sampled.logprobs,
            prompt_logprobs,
        )  # fmt: skip

    def _pooled(self, seq: Sequence, embedding: torch.Tensor) -> StepOutput:
        """An embedding request's result: it finishes now (its blocks are freed)."""
        seq.first_token_time = time.perf_counter()
        self.scheduler.finish(seq, "stop")
        self._forget_if_done(seq.request_id, self._requests.get(seq.request_id, ()))
        return StepOutput(seq.request_id, seq.index, None, "stop", seq.num_cached_tokens,
                          embedding=embedding)  # fmt: skip

    def _fail(self, seq: Sequence, failure: SampleFailure) -> StepOutput:
        """End one choice with reason "error" (its blocks are freed now)."""
        if not seq.is_finished:
            self.scheduler.finish(seq, "error")
        self._forget_if_done(seq.request_id, self._requests.get(seq.request_id, ()))
        return StepOutput(
            seq.request_id,
            seq.index,
            None,
            "error",
            seq.num_cached_tokens,
            failure.message,
            invalid_request=failure.invalid_request,
        )

    def append_token(self, seq: Sequence, token: int) -> FinishReason | None:
        """Append a sampled token to `seq` and advance its grammar: why the token ends it, if
        it does."""
        seq.token_ids.append(token)
        reason = self.stop_reason(seq, token)
        if seq.matcher is not None and reason is None:
            if not seq.matcher.consume_token(token):
                if (failure := grammar_failure(seq.matcher)) is not None:
                    raise GrammarError(failure)  # its limits, reached only now: the request's
                raise RuntimeError(f"the grammar refused token {token}, which its mask allowed")
            if seq.matcher.is_stopped():  # the grammar is complete: nothing may follow
                reason = "stop"
        return reason

    def stop_reason(self, seq: Sequence, token: int) -> FinishReason | None:
        """Whether `token`, just appended to `seq`, ends it: the one stop rule."""
        p = seq.params
        n = seq.num_output_tokens
        if n >= p.min_tokens and (
            (not p.ignore_eos and token in self.stop_token_ids) or token in p.stop_token_id_set
        ):
            return "stop"
        if n >= p.max_tokens or len(seq) >= self.max_model_len:
            return "length"
        return None

    def _forget_if_done(self, request_id: str, seqs: Seq[Sequence]) -> None:
        if seqs and all(s.is_finished for s in seqs):
            self._requests.pop(request_id, None)

    # ---- one sequence outside the scheduler (the seeds' InferenceSession) -----------------
    def forward_alone(self, seq: Sequence, num_new_tokens: int) -> torch.Tensor:
        """Compute the next `num_new_tokens` of `seq` (not scheduled; its blocks come from this
        engine's pool) and return the last position's logits [1, V]."""
        self.block_manager.allocate(seq, num_new_tokens)
        logits = self.runner.compute_logits([ScheduledSequence(seq, num_new_tokens)])
        seq.num_computed_tokens += num_new_tokens
        return logits

    def sample_alone(self, seq: Sequence, logits: torch.Tensor) -> int:
        """Sample `seq`'s next token from `forward_alone`'s logits [1, V] with its params."""
        (sampled,) = self.runner.sample([seq], logits)
        if isinstance(sampled, SampleFailure):
            raise InvalidRequestError(sampled.message)
        return sampled.token_id

    def release(self, seq: Sequence) -> None:
        """Free the blocks of a sequence run by `forward_alone`."""
        self.block_manager.free(seq)
