"""What a front door hands the engine, checked before anything is queued: the error that
refuses a request (`InvalidRequestError`, naming the field at fault), the context window an
engine enforces, and the checks every front door shares."""

from __future__ import annotations

from collections.abc import Sequence as Seq

from roseinfer.config import EngineConfig
from roseinfer.models import ModelConfig
from roseinfer.sampling_params import SamplingParams


class InvalidRequestError(ValueError):
    """A request the engine refuses at submission; nothing else is disturbed. `param`: the
    `SamplingParams` field at fault ("prompt" for the prompt), so that a server can name it
    without reading the message."""

    def __init__(
        self, message: str, param: str | None = None, code: str = "invalid_request"
    ) -> None:
        super().__init__(message)
        self.param = param
        self.code = code  # OpenAI's error code: "context_length_exceeded" past the context


def refuse_unread(params: SamplingParams, reader: str, fields: Seq[str]) -> None:
    """InvalidRequestError naming the first of `fields` ("n", "stop", "logprobs",
    "prompt_logprobs") that asks for what `reader` (a front door that gives back one choice's
    text or token ids) cannot give back: dropped, it would be a field accepted and ignored.
    "stop" stands for every rule on the text (stop strings, `min_indent`,
    `stop_at_newline_after_ms`): a reader of token ids applies none."""
    for name in fields:
        if name == "n" and params.n != 1:
            raise InvalidRequestError(
                f"{reader} gives back one choice: n must be 1, got {params.n} "
                "(LLM.generate returns n choices)",
                name,
            )
        if name == "stop" and params.stop:
            raise InvalidRequestError(
                f"{reader} gives back token ids, not text: stop strings would not be matched "
                "(stop_token_ids act; LLM and the schedulers stop on text)",
                name,
            )
        if name == "stop" and (params.min_indent or params.stop_at_newline_after_ms is not None):
            field = "min_indent" if params.min_indent else "stop_at_newline_after_ms"
            raise InvalidRequestError(
                f"{reader} gives back token ids, not text: {field} (a rule on the text's "
                "lines) would not act (LLM and the schedulers apply it)",
                field,
            )
        if name in ("logprobs", "prompt_logprobs") and getattr(params, name) is not None:
            raise InvalidRequestError(
                f"{reader} gives back text or token ids only: {name} would be lost "
                "(LLM.generate returns them)",
                name,
            )


def context_length(config: EngineConfig, model_config: ModelConfig) -> int:
    """The context window an engine enforces: `max_model_len`, or the model's when it is None.
    Longer than the model's is refused, as vLLM does: positions past it were never trained."""
    limit = model_config.max_position_embeddings
    if config.max_model_len is None:
        return limit
    if config.max_model_len > limit:
        raise ValueError(
            f"max_model_len {config.max_model_len} is longer than the model's context "
            f"(max_position_embeddings {limit})"
        )
    return config.max_model_len


def check_prompt_ids(prompt_token_ids: Seq[int], vocab_size: int) -> None:
    if not prompt_token_ids:
        raise InvalidRequestError("prompt is empty", "prompt")
    if any(
        isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < vocab_size
        for t in prompt_token_ids
    ):
        raise InvalidRequestError(
            f"prompt token ids must be integers in [0, {vocab_size})", "prompt"
        )
