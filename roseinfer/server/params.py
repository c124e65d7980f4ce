"""The request's own names of `SamplingParams`' fields, so that a 400 names the field the client
sent: the output limit is `max_tokens`, `max_completion_tokens` or llama.cpp's `n_predict`
(`/generate`: `max_new_tokens`), the prompt is a chat request's `messages`, and so on.

`SamplingParams` (roseinfer/sampling_params.py) words its refusals with its own field name first;
the engine's `InvalidRequestError` carries the field as `param`.
"""

from __future__ import annotations

import dataclasses

from roseinfer.engine.llm_engine import InvalidRequestError
from roseinfer.sampling_params import SamplingParams
from roseinfer.server import protocol as P
from roseinfer.server.errors import APIError

# The seeds' max_new_tokens is an init-only alias of max_tokens: not among the dataclass fields.
SAMPLING_FIELDS = frozenset(f.name for f in dataclasses.fields(SamplingParams)) | {"max_new_tokens"}
_MAX_TOKENS_ALIASES = ("max_completion_tokens", "n_predict", "max_new_tokens")


def max_tokens_field(body: P.SamplingRequest) -> tuple[str | None, int | None]:
    """(the field that sets the output limit, its value); max_completion_tokens, max_tokens
    and llama.cpp's n_predict (-1: no limit) are one setting, so given twice they must agree."""
    given = [(name, getattr(body, name)) for name in ("max_completion_tokens", "max_tokens",
             "n_predict") if getattr(body, name) is not None]  # fmt: skip
    if not given:
        return None, None
    (first, value), *others = given
    for name, other in others:
        if other != value:
            raise APIError(400, f"{name} ({other}) and {first} ({value}) set the same limit "
                                "differently: give one", param=name)  # fmt: skip
    if first == "n_predict" and value == -1:
        return first, None
    return first, value


def num_choices(body: P.SamplingRequest) -> int:
    """`n`, or llama.cpp's `n_cmpl` for it (given both, they must agree)."""
    if body.n_cmpl is None:
        return body.n
    if "n" in body.model_fields_set and body.n != body.n_cmpl:
        raise APIError(400, f"n_cmpl ({body.n_cmpl}) and n ({body.n}) set the same count "
                            "differently: give one", param="n_cmpl")  # fmt: skip
    return body.n_cmpl


def client_names(body: P.SamplingRequest, chat: bool, so_param: str | None) -> dict[str, str]:
    """SamplingParams' field names (and the engine's "prompt") -> the fields this request set
    them with; `so_param`: the field that asked for structured output."""
    prompt = "messages" if chat else "prompt"
    max_param, _ = max_tokens_field(body)
    names = {
        "prompt": prompt,
        # no limit asked for: the default only fails when the prompt leaves too little room
        "max_tokens": max_param or prompt,
        "n": "n" if body.n_cmpl is None else "n_cmpl",
        "repetition_penalty": "repeat_penalty" if body.repeat_penalty is not None
        else "repetition_penalty",
    }  # fmt: skip
    if chat:
        names["logprobs"] = "top_logprobs"
    if so_param is not None:
        names["structured_outputs"] = so_param
    return names


def sampling_error(error: ValueError, names: dict[str, str]) -> APIError:
    """A 400 for SamplingParams' refusal, naming the field as the request sent it."""
    param = _param_of(error)
    if param is None:
        return APIError(400, str(error))
    sent = names.get(param, param)  # the message says the name the request used too
    return APIError(400, sent + str(error)[len(param) :], param=sent)


def engine_error(error: InvalidRequestError, names: dict[str, str]) -> APIError:
    """A 400 for the engine's refusal (`LLMEngine.validate`), naming the field as the request
    sent it, in the message too where the engine says max_tokens."""
    param = names.get(error.param, error.param) if error.param else None
    message = str(error)
    if error.param == "max_tokens" and param in _MAX_TOKENS_ALIASES:
        message = message.replace("max_tokens", param)
    return APIError(400, message, param=param, code=error.code)


def _param_of(error: ValueError) -> str | None:
    """The SamplingParams field a validation message starts with ("seed must be ...")."""
    name = str(error).split(" ", 1)[0]
    return name if name in SAMPLING_FIELDS else None
