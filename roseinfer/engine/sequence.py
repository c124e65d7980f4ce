"""A request's state as it moves through the engine."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any

from roseinfer.outputs import TokenLogprobs
from roseinfer.pooling_params import PoolingParams
from roseinfer.sampling_params import SamplingParams


class SequenceStatus(enum.Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(eq=False)
class Sequence:
    seq_id: int
    token_ids: list[int]  # prompt + generated so far
    num_prompt_tokens: int
    params: SamplingParams  # this choice's: n = 1 and its own seed
    request_id: str = ""
    index: int = 0  # which of the request's n choices
    status: SequenceStatus = SequenceStatus.WAITING
    num_computed_tokens: int = 0  # tokens whose K/V is in the cache
    num_cached_tokens: int = 0  # of the prompt, served by the prefix cache at the first admission
    num_hashed_blocks: int = 0  # leading blocks registered in the prefix cache
    block_table: list[int] = field(default_factory=list)
    finish_reason: str | None = None  # "stop" | "length" | "abort"
    num_preemptions: int = 0
    arrival_time: float = field(default_factory=time.perf_counter)
    first_token_time: float | None = None
    finish_time: float | None = None
    sampler_state: Any = None  # the sampler's RowState (its generator, its id lists as tensors)
    bad_words_token_ids: tuple[tuple[int, ...], ...] = ()  # params.bad_words, tokenized
    dry_breakers: Any = None  # params.dry's sequence breakers as token ids (a DryBreakers)
    matcher: Any = None  # params.structured_outputs' grammar state (an llguidance LLMatcher)
    # With params.prompt_logprobs: entry j is prompt token j + 1's (computed at position j).
    prompt_logprobs: list[TokenLogprobs] = field(default_factory=list)
    # Choices 1..n-1 of a request: its choice 0, which computes the shared prompt (and its
    # prompt logprobs, if asked) before they are admitted to take it from the prefix cache.
    prompt_leader: Sequence | None = field(default=None, repr=False)
    # An embedding request: its prompt's last hidden state is its result, nothing is sampled
    # (`params` then only bounds it: one token, which it never generates).
    pooling: PoolingParams | None = None

    def __len__(self) -> int:
        return len(self.token_ids)

    @property
    def prompt_token_ids(self) -> list[int]:
        return self.token_ids[: self.num_prompt_tokens]

    @property
    def output_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens :]

    @property
    def num_output_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def is_finished(self) -> bool:
        return self.status is SequenceStatus.FINISHED

    @property
    def needs_prompt_positions(self) -> bool:
        """Its prompt logprobs are not all computed: the prefix cache must not skip them."""
        return (
            self.params.prompt_logprobs is not None
            and len(self.prompt_logprobs) < self.num_prompt_tokens - 1
        )

    @property
    def waits_for_prompt(self) -> bool:
        """Its request's choice 0 is running and has not computed the prompt yet."""
        leader = self.prompt_leader
        return (
            leader is not None
            and leader.status is SequenceStatus.RUNNING
            and leader.num_output_tokens == 0
        )

    @property
    def num_uncomputed_tokens(self) -> int:
        return len(self.token_ids) - self.num_computed_tokens


@dataclass
class ScheduledSequence:
    """A sequence's share of one step, fixed when scheduled (the sequence itself moves on)."""

    seq: Sequence
    num_new_tokens: int  # tokens computed this step, from `start` on
    start: int = field(init=False)  # seq.num_computed_tokens when scheduled
    samples: bool = field(init=False)  # reaches the last token, so a new token is sampled
    pools: bool = field(init=False)  # an embedding request that reaches its last token
    is_prefill: bool = field(init=False)  # computes prompt tokens

    def __post_init__(self) -> None:
        self.start = self.seq.num_computed_tokens
        last = self.start + self.num_new_tokens == len(self.seq)
        self.samples = last and self.seq.pooling is None
        self.pools = last and self.seq.pooling is not None
        self.is_prefill = self.start < self.seq.num_prompt_tokens
