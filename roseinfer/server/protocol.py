"""Request bodies of the OpenAI-compatible API (pydantic) and the response shapes (dicts).

Validation is strict about types (`"max_tokens": "16"` is a 400, as with OpenAI) and lenient
about unknown fields, which are ignored as OpenAI ignores them.

Supported on /v1/completions and /v1/chat/completions: `model`, `max_tokens`,
`max_completion_tokens`, `temperature` (default 1.0; 0 = greedy), `top_p`, `top_k` (0 or -1:
off), `n`, `seed` (choice i of n uses seed + i), `stop` (string or list), `stop_token_ids`,
`ignore_eos`, `min_tokens` (vLLM extensions), `stream`, `stream_options.include_usage`, `user`
(accepted, unused). Chat message content may be a string or a list of text parts.

Rejected with a 400 when set to anything but their "off" value, because we do not implement
them yet and silently ignoring them would change what the client gets: `logprobs`,
`top_logprobs`, `echo`, `suffix`, `best_of` (other than 1 or n), `logit_bias`,
`presence_penalty`, `frequency_penalty`, `repetition_penalty`, `tools`, `tool_choice`,
`functions`, `function_call`, `response_format` (other than text), `modalities` (other than
text), `audio`, `prediction`, `use_beam_search`, `include_stop_str_in_output`, `guided_json`,
`guided_regex`, `guided_choice`, `guided_grammar`, `web_search_options`, and non-text
content parts.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

# field -> predicate: True when the value asks for something we do not do.
_OFF_VALUES: dict[str, Any] = {
    "logprobs": lambda v: v not in (None, False),
    "top_logprobs": lambda v: v not in (None, 0),
    "echo": lambda v: v not in (None, False),
    "suffix": lambda v: v not in (None, ""),
    "logit_bias": lambda v: bool(v),
    "presence_penalty": lambda v: v not in (None, 0, 0.0),
    "frequency_penalty": lambda v: v not in (None, 0, 0.0),
    "repetition_penalty": lambda v: v not in (None, 1, 1.0),
    "tools": lambda v: bool(v),
    "tool_choice": lambda v: v not in (None, "none", "auto"),
    "functions": lambda v: bool(v),
    "function_call": lambda v: v not in (None, "none", "auto"),
    "response_format": lambda v: (
        v is not None and not (isinstance(v, dict) and v.get("type") == "text")
    ),
    "modalities": lambda v: v is not None and list(v) != ["text"],
    "audio": lambda v: v is not None,
    "prediction": lambda v: v is not None,
    "use_beam_search": lambda v: v not in (None, False),
    "include_stop_str_in_output": lambda v: v not in (None, False),
    "guided_json": lambda v: v is not None,
    "guided_regex": lambda v: v is not None,
    "guided_choice": lambda v: v is not None,
    "guided_grammar": lambda v: v is not None,
    "web_search_options": lambda v: v is not None,
}

CHAT_ROLES = ("system", "user", "assistant", "developer", "tool")


class UnsupportedFieldError(ValueError):
    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


class RequestBase(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        """`"n": null` is `n` left out, as OpenAI reads it (clients send explicit nulls)."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    def check_unsupported(self) -> None:
        """Raise UnsupportedFieldError for the first field set to something we do not do."""
        values = {**(self.model_extra or {}), **self.__dict__}
        for name, is_on in _OFF_VALUES.items():
            if name in values and is_on(values[name]):
                raise UnsupportedFieldError(name, f"'{name}' is not supported by this server yet")
        best_of = values.get("best_of")
        if best_of is not None and best_of not in (1, values.get("n", 1)):
            raise UnsupportedFieldError("best_of", "'best_of' is not supported by this server yet")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    include_usage: bool | None = False


class SamplingRequest(RequestBase):
    model: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=-1)
    n: int = Field(1, ge=1, le=128)
    seed: int | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    min_tokens: int = Field(0, ge=0)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and bool(self.stream_options.include_usage)

    @property
    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


class CompletionRequest(SamplingRequest):
    prompt: str | list[str] | list[int] | list[list[int]]


class TextPart(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    role: str
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[Any] | None = None


class ChatCompletionRequest(SamplingRequest):
    messages: list[ChatMessage] = Field(min_length=1)

    def template_messages(self) -> list[dict[str, str]]:
        """The messages as the chat template takes them ({role, content} with string content)."""
        out = []
        for i, m in enumerate(self.messages):
            if m.role not in CHAT_ROLES:
                raise UnsupportedFieldError(
                    f"messages.{i}.role",
                    f"messages[{i}].role {m.role!r} is not one of {', '.join(CHAT_ROLES)}",
                )
            if m.tool_calls:
                raise UnsupportedFieldError(
                    f"messages.{i}.tool_calls", "tool calls are not supported yet"
                )
            if isinstance(m.content, list):
                for j, part in enumerate(m.content):
                    if part.type != "text" or part.text is None:
                        raise UnsupportedFieldError(
                            f"messages.{i}.content.{j}",
                            f"content part type {part.type!r} is not supported; only 'text'",
                        )
                content = "\n".join(p.text or "" for p in m.content)
            else:
                content = m.content or ""
            out.append({"role": "system" if m.role == "developer" else m.role, "content": content})
        return out


class GenerateRequest(RequestBase):
    """The seeds' /generate body."""

    model_config = ConfigDict(extra="ignore", strict=True)
    prompt: str
    max_new_tokens: int = Field(64, ge=1)
    temperature: float = Field(1.0, ge=0)
    top_k: int = Field(0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    stop_on_eos: bool = True
    do_sample: bool = False
    stream: bool = False
    seed: int | None = None
    stop: str | list[str] | None = None


# ---- responses (plain dicts: the exact OpenAI shapes, nulls where OpenAI has them) -------------


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def now() -> int:
    return int(time.time())


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion_response(rid: str, created: int, model: str, choices: list[dict], use: dict) -> dict:
    return {
        "id": rid, "object": "text_completion", "created": created, "model": model,
        "choices": choices, "usage": use, "system_fingerprint": None,
    }  # fmt: skip


def completion_choice(index: int, text: str, finish_reason: str | None) -> dict:
    return {"index": index, "text": text, "logprobs": None, "finish_reason": finish_reason}


def chat_response(rid: str, created: int, model: str, choices: list[dict], use: dict) -> dict:
    return {
        "id": rid, "object": "chat.completion", "created": created, "model": model,
        "choices": choices, "usage": use, "system_fingerprint": None,
    }  # fmt: skip


def chat_choice(index: int, text: str, finish_reason: str | None) -> dict:
    return {
        "index": index, "message": {"role": "assistant", "content": text},
        "logprobs": None, "finish_reason": finish_reason,
    }  # fmt: skip


def chat_chunk_choice(index: int, delta: dict, finish_reason: str | None) -> dict:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def chunk(
    rid: str, obj: str, created: int, model: str, choices: list[dict], with_usage: bool
) -> dict:
    """One SSE chunk; with `stream_options.include_usage` every chunk carries `"usage": null`."""
    out = {"id": rid, "object": obj, "created": created, "model": model, "choices": choices}
    if with_usage:
        out["usage"] = None
    return out


def model_card(name: str, created: int, max_model_len: int) -> dict:
    return {
        "id": name, "object": "model", "created": created, "owned_by": "roseinfer",
        "root": name, "parent": None, "max_model_len": max_model_len,
    }  # fmt: skip


def error_body(
    message: str, type_: str, param: str | None = None, code: str | int | None = None
) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}
