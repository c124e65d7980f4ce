"""Owns the KV cache and runs one batched forward over it for a scheduled step."""

from __future__ import annotations

import logging
from array import array
from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from roseinfer.backends import Backend, BackendOptions, select_backend
from roseinfer.config import EngineConfig
from roseinfer.engine.sequence import ScheduledSequence, Sequence
from roseinfer.layers.attention import AttentionMetadata, ForwardContext
from roseinfer.layers.infill import InfillFilter
from roseinfer.layers.kv_cache import KVCache, KVCacheDtype
from roseinfer.layers.logprobs import LogprobOps, to_records, token_logprobs
from roseinfer.layers.sampler import NO_TOKEN, NOT_FINITE, Sampler
from roseinfer.layers.truncation import CandidateOps
from roseinfer.loader import LoadedModel
from roseinfer.models.config import ModelConfig
from roseinfer.outputs import TokenLogprobs
from roseinfer.structured.grammar import grammar_failure

logger = logging.getLogger(__name__)


def long_tensor(values: list[int], device: torch.device) -> torch.Tensor:
    """int64 [len(values)] over an `array` of them: half the cost of `torch.tensor` of a list
    when the step's weights have just evicted PyTorch's code (BENCHMARKS.md, session 28)."""
    if not values:
        return torch.empty(0, dtype=torch.long, device=device)
    t = torch.frombuffer(array("q", values), dtype=torch.long)  # keeps the array alive
    return t if device.type == "cpu" else t.to(device)


def num_blocks_for_budget(
    model_config: ModelConfig,
    block_size: int,
    dtype: torch.dtype,
    gib: float,
    kv_cache_dtype: str = "auto",
) -> int:
    """KV blocks in `gib` GiB; `kv_cache_dtype` the flag, as the engine sizes its cache before
    it has a runner (and so a backend)."""
    block = KVCache.block_bytes(model_config, block_size, dtype, KVCacheDtype(kv_cache_dtype))
    return max(1, int(gib * (1 << 30)) // block)


@dataclass(frozen=True)
class StepHidden:
    """The model's final hidden states for the step's rows that are read (`read_rows`)."""

    states: torch.Tensor  # [len(rows), hidden], or [N, hidden] where rows is None
    rows: list[int] | None  # the step's token rows they belong to, ascending; None: all N

    def index(self, rows: list[int]) -> list[int]:
        """Where the given token rows' states are in `states`."""
        if self.rows is None:
            return rows
        at = {r: i for i, r in enumerate(self.rows)}
        return [at[r] for r in rows]


def read_rows(
    batch: Seq[ScheduledSequence], last_rows: list[int], num_tokens: int
) -> list[int] | None:
    """The token rows whose final hidden states a step reads, ascending: the last new row of
    each sequence that samples or pools, and every new row of a prefill that reports prompt
    logprobs; None where that is all of them (decode steps). The model's last layer attends, projects and
    runs its MLP for these alone (of the other rows the step needs only their keys and values):
    a prompt's chunks before its last read none."""
    rows: list[int] = []
    for s, last in zip(batch, last_rows, strict=True):
        if s.is_prefill and s.seq.params.prompt_logprobs is not None:
            rows.extend(range(last - s.num_new_tokens + 1, last + 1))
        elif s.samples or s.pools:
            rows.append(last)
    return None if len(rows) == num_tokens else sorted(rows)


class ModelRunner:
    def __init__(self, loaded: LoadedModel, config: EngineConfig, num_blocks: int) -> None:
        self.model = loaded.model
        self.model_config = loaded.model_config
        self.num_blocks = num_blocks
        self.block_size = config.block_size
        self.device = torch.device(config.device)
        self.backend = _backend(loaded, config, self.device)
        self.sampler = Sampler(
            self.device,
            config.seed,
            loaded.tokenizer.stop_token_ids,
            self.backend.argmax,
            self.backend.apply_bitmask,
            LogprobOps(self.backend.logsumexp, self.backend.count_greater),
            InfillFilter(loaded.tokenizer.token_piece, loaded.tokenizer.end_token_id),
            CandidateOps(
                self.backend.top_candidates, self.backend.logsumexp, self.backend.sample_candidates
            ),
        )
        self.kv_cache = KVCache(
            self.model_config,
            num_blocks,
            self.block_size,
            loaded.dtype,
            self.device,
            self.backend.options.kv_cache_dtype,
        )
        # Asked once: the model's layers fused into one call, for the steps it takes (or None).
        self.decoder_stack = self.backend.decoder_stack(self.model)

    @property
    def capacity_tokens(self) -> int:
        return self.num_blocks * self.block_size

    def prepare(
        self, batch: Seq[ScheduledSequence]
    ) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata, list[int]]:
        """Flatten the step's tokens, decodes first: (input_ids [N], positions [N], metadata,
        the row of each scheduled sequence's last new token, in batch order)."""
        bs = self.block_size
        order = sorted(range(len(batch)), key=lambda i: batch[i].num_new_tokens != 1)
        input_ids: list[int] = []
        positions: list[int] = []
        slots: list[int] = []
        query_lens: list[int] = []
        context_lens: list[int] = []
        last_row = [0] * len(batch)
        for i in order:
            s = batch[i]
            seq, start = s.seq, s.start
            end = start + s.num_new_tokens
            input_ids.extend(seq.token_ids[start:end])
            positions.extend(range(start, end))
            table = seq.block_table
            slots.extend(table[p // bs] * bs + p % bs for p in range(start, end))
            query_lens.append(s.num_new_tokens)
            context_lens.append(end)
            last_row[i] = len(input_ids) - 1
        max_blocks = max(len(s.seq.block_table) for s in batch)
        tables: list[int] = []  # [B, max_blocks] row-major
        for i in order:
            table = batch[i].seq.block_table
            tables += table
            tables += [0] * (max_blocks - len(table))
        dev = self.device
        starts = [0]
        for n in query_lens:
            starts.append(starts[-1] + n)
        meta = AttentionMetadata(
            query_start_loc=long_tensor(starts, dev),
            context_lens=long_tensor(context_lens, dev),
            slot_mapping=long_tensor(slots, dev),
            block_tables=long_tensor(tables, dev).view(len(batch), max_blocks),
            query_lens=query_lens,
            context_lens_host=context_lens,
            num_decode_seqs=sum(1 for n in query_lens if n == 1),
            block_size=bs,
        )
        return long_tensor(input_ids, dev), long_tensor(positions, dev), meta, last_row

    def _forward(
        self, batch: Seq[ScheduledSequence], every_row: bool = False
    ) -> tuple[StepHidden, list[int]]:
        """Forward the step: (the final hidden states of the rows it reads, or of every row with
        `every_row`; the row of each sequence's last new token)."""
        input_ids, positions, meta, last_rows = self.prepare(batch)
        attention = self.backend.attention
        step = attention.prepare(meta)
        stack = self.decoder_stack
        ctx: ForwardContext[Any] = ForwardContext(
            step=step,
            attention=attention,
            kv_cache=self.kv_cache,
            decoder_stack=None if stack is None else stack.for_step(step, self.kv_cache),
        )
        rows = None if every_row else read_rows(batch, last_rows, meta.num_tokens)
        index = None if rows is None else long_tensor(rows, self.device)
        return StepHidden(self.model(input_ids, positions, ctx, index), rows), last_rows

    def _logits(self, hidden: StepHidden, rows: list[int]) -> torch.Tensor:
        if not rows:
            return hidden.states.new_empty(0, self.model_config.vocab_size)
        at = hidden.index(rows)
        if at == list(range(hidden.states.shape[0])):  # every row computed: no gather
            return self.model.compute_logits(hidden.states)  # [len(rows), V], the model dtype
        return self.model.compute_logits(hidden.states[long_tensor(at, self.device)])

    @torch.inference_mode()
    def compute_logits(
        self, batch: Seq[ScheduledSequence], all_positions: bool = False
    ) -> torch.Tensor:
        """Forward the step; logits [num sampling seqs, vocab] for the sequences that sample
        (or [N, vocab] for every new token with `all_positions`, to score text), in batch order."""
        hidden, last_rows = self._forward(batch, every_row=all_positions)
        if all_positions:
            rows = [
                r
                for last, s in zip(last_rows, batch, strict=True)
                for r in range(last - s.num_new_tokens + 1, last + 1)
            ]
        else:
            rows = [last for last, s in zip(last_rows, batch, strict=True) if s.samples]
        return self._logits(hidden, rows)

    @torch.inference_mode()
    def run(self, batch: Seq[ScheduledSequence]) -> RunnerOutput:
        """Forward then sample: one new token per sequence that reached its last token (in
        batch order), or the failure of that sequence's sampling; the embedding of each
        embedding request that did; and the prompt logprobs of the sequences that ask for them."""
        hidden, last_rows = self._forward(batch)
        pooled = [(s.seq, last) for s, last in zip(batch, last_rows, strict=True) if s.pools]
        embeddings = self._pool(hidden, pooled) if pooled else []
        rows = [last for last, s in zip(last_rows, batch, strict=True) if s.samples]
        seqs = [s.seq for s in batch if s.samples]
        sampled = []
        if seqs:
            sampled = self.sample(
                seqs, self._logits(hidden, rows), lambda: self._logits(hidden, rows)
            )
        prompt: list[list[TokenLogprobs] | SampleFailure] = []
        for s, last in zip(batch, last_rows, strict=True):
            try:
                prompt.append(self._prompt_logprobs(s, hidden, last) if s.is_prefill else [])
            except Exception as e:  # this request alone fails
                logger.exception("prompt logprobs failed")
                prompt.append(SampleFailure.of(e, "prompt logprobs"))
        return RunnerOutput(sampled, prompt, embeddings)

    def _pool(
        self, hidden: StepHidden, pooled: list[tuple[Sequence, int]]
    ) -> list[torch.Tensor | SampleFailure]:
        """Each embedding request's vector ([hidden] float32, on the CPU): its last row's final
        hidden state, L2-normalized where its PoolingParams ask. One that is not finite fails
        alone (JSON has no NaN); so does one whose pooling raises (the batch is pooled again
        row by row to find it)."""
        try:
            return self._pool_rows(hidden, pooled)
        except Exception:
            logger.exception("pooling failed; pooling the batch row by row to find the request")
        vectors: list[torch.Tensor | SampleFailure] = []
        for one in pooled:
            try:
                vectors += self._pool_rows(hidden, [one])
            except Exception as e:
                vectors.append(SampleFailure.of(e, "pooling"))
        return vectors

    def _pool_rows(
        self, hidden: StepHidden, pooled: list[tuple[Sequence, int]]
    ) -> list[torch.Tensor | SampleFailure]:
        at = long_tensor(hidden.index([last for _, last in pooled]), self.device)
        states = hidden.states[at].float()  # [len(pooled), hidden]
        flags = [seq.pooling is None or seq.pooling.normalize for seq, _ in pooled]
        normalize = torch.tensor(flags, device=self.device)
        states = torch.where(normalize[:, None], F.normalize(states, dim=-1), states).cpu()
        finite = torch.isfinite(states).all(dim=-1).tolist()
        return [
            row if ok else SampleFailure(NOT_FINITE_EMBEDDING)
            for row, ok in zip(states.unbind(0), finite, strict=True)
        ]

    def _prompt_logprobs(
        self, s: ScheduledSequence, hidden: StepHidden, last: int
    ) -> list[TokenLogprobs]:
        """Logprobs of the prompt tokens this step's positions predict (position p: token
        p + 1), skipping those already reported (a preempted sequence computes them again)."""
        seq = s.seq
        k = seq.params.prompt_logprobs
        if k is None:
            return []
        first = max(s.start, len(seq.prompt_logprobs))
        end = min(s.start + s.num_new_tokens, seq.num_prompt_tokens - 1)
        records: list[TokenLogprobs] = []
        base = last - (s.start + s.num_new_tokens - 1)  # the row of position s.start
        for lo in range(first, end, PROMPT_LOGPROBS_ROWS):  # bounded [rows, V] at a time
            hi = min(lo + PROMPT_LOGPROBS_ROWS, end)
            logits = self._logits(hidden, list(range(base + lo, base + hi)))  # model's dtype
            targets = seq.token_ids[lo + 1 : hi + 1]
            ids = long_tensor(targets, self.device)
            lp = token_logprobs(logits, ids, k, self.sampler.logprob_ops)
            records += to_records(lp, targets, [k] * len(targets))
        return records

    def sample(
        self,
        seqs: list[Sequence],
        logits: torch.Tensor,
        fresh_logits: Callable[[], torch.Tensor] | None = None,
    ) -> list[SampledToken | SampleFailure]:
        """Each sequence's next token from its row of `logits` [B, V]. One request whose
        sampling raises (its generator, its parameters) fails alone: the batch is sampled
        again row by row to find it, and the others get their tokens, the same ones as
        without it: from `fresh_logits()` (the same [B, V] again: the sampler's masks wrote
        into `logits`), their seeded generators put back where they were."""
        failures: dict[int, SampleFailure] = {}
        for i, seq in enumerate(seqs):
            if seq.sampler_state is None:
                try:
                    seq.sampler_state = self.sampler.new_row_state(
                        seq.params, seq.bad_words_token_ids, seq.dry_breakers
                    )
                except Exception as e:
                    failures[i] = SampleFailure.of(e)
        rows = [i for i in range(len(seqs)) if i not in failures]
        if failures and rows:
            logits = logits[rows]
        sampled: list[SampledToken | SampleFailure]
        # Only a batch is sampled again: then each seeded generator must draw once in all.
        generators = [
            g for i in rows if (g := seqs[i].sampler_state.generator) is not None
        ] if len(rows) > 1 else []  # fmt: skip
        states = [g.get_state() for g in generators]
        try:
            sampled = [*self._sample([seqs[i] for i in rows], logits)] if rows else []
        except Exception:
            logger.exception("sampling failed; sampling the batch row by row to find the request")
            for g, state in zip(generators, states, strict=True):
                g.set_state(state)
            if fresh_logits is not None:
                logits = fresh_logits()
                if failures:
                    logits = logits[rows]
            sampled = []
            for j, i in enumerate(rows):
                try:
                    sampled += self._sample([seqs[i]], logits[j : j + 1])
                except Exception as e:
                    sampled.append(SampleFailure.of(e))
        tokens = iter(sampled)  # in `rows` order: the failures' places are skipped
        return [failures[i] if i in failures else next(tokens) for i in range(len(seqs))]

    def _sample(
        self, seqs: list[Sequence], logits: torch.Tensor
    ) -> list[SampledToken | SampleFailure]:
        out = self.sampler(
            logits,
            [s.params for s in seqs],
            [s.sampler_state for s in seqs],
            [s.num_output_tokens for s in seqs],
            seqs,
        )
        ids = out.token_ids.tolist()
        logprobs: list[TokenLogprobs | None] = [None] * len(ids)
        if out.logprobs is not None:
            rows = out.logprob_rows
            records = to_records(
                out.logprobs, [ids[i] for i in rows], [seqs[i].params.logprobs or 0 for i in rows]
            )
            for i, record in zip(rows, records, strict=True):
                logprobs[i] = record
        sampled: list[SampledToken | SampleFailure]
        sampled = [SampledToken(t, lp) for t, lp in zip(ids, logprobs, strict=True)]
        for i in out.no_token_rows:
            matcher = seqs[i].matcher
            failure = None if matcher is None else grammar_failure(matcher)
            sampled[i] = SampleFailure(failure or NO_TOKEN, invalid_request=True)
        for i in out.non_finite_rows:
            sampled[i] = SampleFailure(NOT_FINITE)
        return sampled


NOT_FINITE_EMBEDDING = "the model's hidden state at the prompt's last token is not finite"

# Prompt positions whose logprobs are computed at once: [rows, vocab] fp32 stays ~100 MB.
PROMPT_LOGPROBS_ROWS = 512


@dataclass(frozen=True, slots=True)
class SampledToken:
    token_id: int
    logprobs: TokenLogprobs | None = None  # with SamplingParams.logprobs


@dataclass(frozen=True, slots=True)
class RunnerOutput:
    """A step's results: per sampling sequence (batch order) its token or failure, and per
    embedding request its vector or failure; per scheduled sequence the logprobs of the prompt tokens it computed (SamplingParams.
    prompt_logprobs; else empty), or their failure."""

    sampled: list[SampledToken | SampleFailure]
    prompt_logprobs: list[list[TokenLogprobs] | SampleFailure]
    # per embedding request (ScheduledSequence.pools; batch order): [hidden] float32, CPU
    embeddings: list[torch.Tensor | SampleFailure] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SampleFailure:
    """Why one sequence's sampling (or its prompt logprobs) failed: that request fails, the
    step goes on. `invalid_request`: the request's own doing (its masks exclude every token),
    not the engine's."""

    message: str
    invalid_request: bool = False

    @classmethod
    def of(cls, error: Exception, what: str = "sampling") -> SampleFailure:
        return cls(f"{what} failed: {type(error).__name__}: {error}")


def _backend(loaded: LoadedModel, config: EngineConfig, device: torch.device) -> Backend:
    """The loader's backend, which made the model's layers; a fresh one only for a runner whose
    flags differ from the loader's (`new_core(attention_backend=...)`, another cache dtype)."""
    backend = loaded.backend
    if backend is not None and backend.options == BackendOptions.from_config(config, device):
        return backend
    return select_backend(config, device)
