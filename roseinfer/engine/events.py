"""What the engine thread hands the readers of `EngineClient` (`client.py`): each choice's
`EngineEvent`s, built from its record of the request (`SubmittedRequest`), and the
`EngineObserver` calls the server's metrics implement."""

from __future__ import annotations

import asyncio
import queue
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from roseinfer.engine.llm_engine import EngineStats
from roseinfer.engine.sequence import Sequence
from roseinfer.outputs import FinishReason, PromptProgress, TokenLogprobs
from roseinfer.pooling_params import PoolingParams
from roseinfer.sampling_params import SamplingParams

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True, slots=True)
class EngineEvent:
    """What one step produced for one choice of a request."""

    index: int  # the choice
    token_ids: tuple[int, ...] = ()  # new tokens, in order (one per step, or stream_interval)
    finish_reason: FinishReason | None = None  # set on the choice's last event
    error: str | None = None  # why the engine failed the request
    logprobs: tuple[TokenLogprobs, ...] | None = None  # one per token, with params.logprobs
    prompt_logprobs: tuple[TokenLogprobs, ...] | None = None  # on a choice's first event
    invalid_request: bool = False  # the error was the request's own doing (a 400, not a 500)
    num_cached_tokens: int = 0  # prompt tokens the prefix cache served (choice 0's: the prompt's)
    embedding: torch.Tensor | None = None  # an embedding request's result ([hidden] float32)
    # a progress event (choice 0's, nothing else in it): how far the prompt is computed
    prompt_progress: PromptProgress | None = None

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


# Where a request's events go: (its event loop, its asyncio.Queue), or a queue.Queue.
Sink = tuple[asyncio.AbstractEventLoop, asyncio.Queue] | queue.Queue


@dataclass(eq=False, slots=True)
class SubmittedRequest:
    """The engine thread's record of one submitted request: what its choices have pending for
    their next event."""

    request_id: str
    prompt_ids: list[int]
    params: SamplingParams
    sink: Sink
    submit_time: float = field(default_factory=time.perf_counter)
    first_token_time: list[float | None] = field(default_factory=list)
    num_output_tokens: list[int] = field(default_factory=list)
    pending: list[list[int]] = field(default_factory=list)  # held back by stream_interval
    pending_logprobs: list[list[TokenLogprobs]] = field(default_factory=list)  # theirs
    # A choice's first step output has them; that choice's first event takes them.
    prompt_logprobs: tuple[TokenLogprobs, ...] | None = None
    open: set[int] = field(default_factory=set)  # choices not finished yet
    num_cached_tokens: int = 0  # of the prompt, served by the prefix cache (choice 0's)
    stream_interval: int | None = None  # this request's own (None: the client's)
    pooling: PoolingParams | None = None  # an embedding request (of `params`, n = 1 is read)
    embedding: torch.Tensor | None = None  # its result, for its last event
    report_progress: bool = False  # progress events while its prompt is computed
    progress_sent: int = 0  # of the prompt's tokens, the most a progress event reported

    def __post_init__(self) -> None:
        n = self.params.n
        self.first_token_time = [None] * n
        self.num_output_tokens = [0] * n
        self.pending = [[] for _ in range(n)]
        self.pending_logprobs = [[] for _ in range(n)]
        self.open = set(range(n))

    def progress(self, seq: Sequence, now: float) -> EngineEvent | None:
        """Choice 0's progress event, where its sequence `seq` has computed more of the prompt
        than the last one said (preempted, it counts again from 0: nothing is said)."""
        computed = min(seq.num_computed_tokens, seq.num_prompt_tokens)
        if computed <= self.progress_sent:
            return None
        self.progress_sent = computed
        progress = PromptProgress(seq.num_prompt_tokens, seq.num_cached_tokens, computed,
                                  (now - self.submit_time) * 1e3)  # fmt: skip
        return EngineEvent(0, prompt_progress=progress)

    def take(
        self,
        i: int,
        reason: FinishReason | None = None,
        error: str | None = None,
        invalid_request: bool = False,
    ) -> EngineEvent:
        """Choice `i`'s event of what it has pending (tokens, their logprobs, the prompt's)."""
        logprobs = tuple(self.pending_logprobs[i]) if self.params.logprobs is not None else None
        prompt = None
        if self.prompt_logprobs is not None:
            prompt, self.prompt_logprobs = self.prompt_logprobs, None
        event = EngineEvent(i, tuple(self.pending[i]), reason, error, logprobs, prompt,
                            invalid_request, self.num_cached_tokens, self.embedding)  # fmt: skip
        self.pending[i].clear()
        self.pending_logprobs[i].clear()
        return event


class EngineObserver(Protocol):
    """What the engine thread reports (the server's Prometheus metrics implement it)."""

    def on_request_added(self, num_prompt_tokens: int) -> None: ...
    def on_first_token(self, ttft: float) -> None: ...
    def on_generated_tokens(self, num_tokens: int) -> None: ...
    def on_finished(self, reason: str, submit_time: float, first_token_time: float | None,
                    now: float, num_output_tokens: int) -> None: ...  # fmt: skip
    def on_stats(
        self, stats: EngineStats, num_pending: int, num_cached_blocks: int | None
    ) -> None: ...


def check_stream_interval(stream_interval: int) -> None:
    if isinstance(stream_interval, bool) or not isinstance(stream_interval, int):
        raise ValueError(f"stream_interval must be an integer, got {stream_interval!r}")
    if stream_interval < 1:
        raise ValueError(f"stream_interval must be >= 1, got {stream_interval}")
