"""What a request gives back (vLLM's shapes): `RequestOutput` with one `CompletionOutput` per choice.

Plain data, no torch: every front door (`LLM`, `EngineClient`, the seeds' wrappers, the CLI)
returns or reads these, built by `roseinfer.output.processor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# stop: EOS, a stop token id or a stop string; length: max_tokens or the context window;
# abort: the caller ended it; error: the engine failed this request; tool_calls: it stopped
# after calling tools.
FinishReason = Literal["stop", "length", "abort", "error", "tool_calls"]


class RequestFailed(RuntimeError):
    """The engine failed this request (finish reason "error"), raised where a front door has
    no other way to say so (`LLM.stream`, the seeds' text readers, `EngineClient.generate`);
    `invalid_request`: because of what the request asked for (a server answers 400), not of the
    engine (500)."""

    def __init__(self, message: str, invalid_request: bool = False) -> None:
        super().__init__(message)
        self.invalid_request = invalid_request


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call read from a choice's text (OpenAI's `tool_calls[]`)."""

    id: str
    name: str
    arguments: str  # JSON text of the arguments object, as the model wrote it


@dataclass(frozen=True, slots=True)
class TokenLogprobs:
    """The engine's record of one position: the log-probability of the token there (sampled,
    or the prompt's next token) and the position's likeliest tokens, under the model's raw
    distribution (log_softmax of the logits, before penalties, bias and temperature), or, for
    a request with `logprobs_processed`, the distribution the token was drawn from."""

    token_id: int
    logprob: float
    rank: int  # 1: the likeliest token
    top: tuple[tuple[int, float], ...] = ()  # (token id, logprob) of the top N, likeliest first
    # where `top` holds the request's listed tokens (`logprob_token_ids`, in its order): their
    # ranks (empty: `top` is the top N, ranked 1 to N)
    top_ranks: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Logprob:
    """vLLM's `Logprob`: one token's log-probability at a position, its rank and its text."""

    logprob: float
    rank: int  # 1: the likeliest
    decoded_token: str


# A position's logprobs (vLLM's shape): the token there first, then the top N not already in.
PositionLogprobs = dict[int, Logprob]


@dataclass(frozen=True)
class CompletionOutput:
    """One choice: its text and token ids so far (all of them, not a delta)."""

    index: int
    text: str
    token_ids: list[int]
    finish_reason: FinishReason | None = None  # None while running
    # What ended it with "stop": the stop string or the request's stop token id (None for EOS).
    stop_reason: str | int | None = None
    # With SamplingParams.logprobs: one entry per token of token_ids, and their sum.
    logprobs: list[PositionLogprobs] | None = None
    cumulative_logprob: float | None = None
    # With tools: the calls read from the text (which then holds only the rest).
    tool_calls: list[ToolCall] | None = None
    error: str | None = None  # why it finished with "error"

    def finished(self) -> bool:
        """Whether this choice has ended (a method, as vLLM's; `RequestOutput.finished` is
        the request's flag)."""
        return self.finish_reason is not None


@dataclass(frozen=True, slots=True)
class PromptProgress:
    """How far a request's prompt has been computed (llama.cpp's `prompt_progress`): after
    each step that computed part of it, until the whole of it is."""

    total: int  # the prompt's tokens
    cached: int  # of them, served by the prefix cache
    computed: int  # of them, in the KV cache so far (the cached ones included)
    time_ms: float  # since the request was submitted


@dataclass(frozen=True)
class RequestMetrics:
    ttft: float  # seconds from submission to the first token
    e2e_latency: float  # seconds from submission to the last token
    num_cached_tokens: int  # prompt tokens served by the prefix cache


@dataclass(frozen=True)
class RequestOutput:
    """A request's choices; `text`, `token_ids` and `finish_reason` read the first one."""

    request_id: str
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool
    metrics: RequestMetrics
    # With SamplingParams.prompt_logprobs: one per prompt token, None for the first (it has no
    # context); set from the first output on.
    prompt_logprobs: list[PositionLogprobs | None] | None = None
    prompt: str | None = None  # a text prompt as given (vLLM's; None for token ids)

    @property
    def num_cached_tokens(self) -> int:
        """Prompt tokens the prefix cache served (vLLM's name; `metrics` holds it too)."""
        return self.metrics.num_cached_tokens

    @property
    def text(self) -> str:
        return self.outputs[0].text

    @property
    def token_ids(self) -> list[int]:
        return self.outputs[0].token_ids

    @property
    def finish_reason(self) -> FinishReason | None:
        return self.outputs[0].finish_reason

    @property
    def num_output_tokens(self) -> int:
        return sum(len(o.token_ids) for o in self.outputs)


@dataclass(frozen=True, slots=True)
class EmbeddingOutput:
    """One embedding (vLLM's `EmbeddingOutput`): float32 values, the model's hidden size."""

    embedding: list[float]

    @property
    def hidden_size(self) -> int:
        return len(self.embedding)


@dataclass(frozen=True, slots=True)
class EmbeddingRequestOutput:
    """An embedding request's result (`LLM.embed`; vLLM's `EmbeddingRequestOutput`)."""

    request_id: str
    prompt_token_ids: list[int]
    outputs: EmbeddingOutput
    num_cached_tokens: int = 0  # prompt tokens the prefix cache served
    finished: bool = True
