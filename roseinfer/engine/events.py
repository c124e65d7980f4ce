"""What the engine thread hands the readers of `EngineClient` (`client.py`): each choice's
`EngineEvent`s, and the `EngineObserver` calls the server's metrics implement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from roseinfer.engine.llm_engine import EngineStats
from roseinfer.outputs import FinishReason, TokenLogprobs


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

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


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
