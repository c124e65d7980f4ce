"""Request bodies of the OpenAI-compatible API (pydantic) and the response shapes (dicts).

The pydantic models hold exactly the *honoured* fields of `fields.py`'s table, which is applied
to each body first (`body_check.check_body`): unknown fields, refused ones and no-ops never
reach pydantic. Validation here is about types only, and strict (`"max_tokens": "16"` is a 400,
as with OpenAI); ranges are `SamplingParams`' (roseinfer/sampling_params.py), checked once for
the Python API and the server alike.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from roseinfer.chat import ChatMessage, NamedToolChoice, ToolDefinition


class RequestBase(BaseModel):
    # forbid: a field the table lets through but no model declares is a bug, not a no-op
    model_config = ConfigDict(extra="forbid", strict=True)


class StreamOptions(RequestBase):
    include_usage: bool = False
    continuous_usage_stats: bool = False  # vLLM's: the usage so far in every chunk


class JsonSchemaFormat(RequestBase):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's (it refuses others too)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None
    description: str | None = None


class ResponseFormat(RequestBase):
    type: str  # "text", "json_object" or "json_schema" (app.py refuses others, naming them)
    json_schema: JsonSchemaFormat | None = None


class StructuredOutputsRequest(RequestBase):
    """vLLM's `structured_outputs` object."""

    json_: dict[str, Any] | str | None = Field(default=None, alias="json")
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None


class SamplingRequest(RequestBase):
    model: str | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n_predict: int | None = None  # llama.cpp's max_tokens
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    n: int = 1
    n_cmpl: int | None = None  # llama.cpp's n
    seed: int | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    ignore_eos: bool = False
    include_stop_str_in_output: bool = False  # vLLM's
    skip_special_tokens: bool = True  # vLLM's
    min_tokens: int = 0
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    repetition_penalty: float | None = None
    repeat_penalty: float | None = None  # llama.cpp's repetition_penalty
    repeat_last_n: int | None = None  # llama.cpp's window of the penalties (penalty_last_n)
    min_p: float | None = None
    logit_bias: dict[str, float] | None = None  # JSON keys: token ids as strings
    prompt_logprobs: int | None = None
    bad_words: list[str] | None = None
    allowed_token_ids: list[int] | None = None
    response_format: ResponseFormat | None = None
    structured_outputs: StructuredOutputsRequest | None = None
    guided_json: dict[str, Any] | str | None = None
    guided_regex: str | None = None
    guided_choice: list[str] | None = None
    guided_grammar: str | None = None
    json_schema: dict[str, Any] | None = None  # llama.cpp's
    grammar: str | None = None  # llama.cpp's GBNF
    stream: bool = False
    stream_options: StreamOptions | None = None
    stream_interval: int | None = None  # vLLM's: tokens per chunk after the first
    request_id: str | None = Field(default=None, min_length=1)  # "" would name nothing
    truncate_prompt_tokens: int | None = None
    truncation_side: Literal["left", "right"] | None = None  # vLLM's: None is "left"
    samplers: list[str] | str | None = None  # llama.cpp's chain (sampler_chain.py)
    n_indent: int = 0  # llama.cpp's: SamplingParams.min_indent
    t_max_predict_ms: float | None = None  # llama.cpp's: <= 0 none
    post_sampling_probs: bool = False  # llama.cpp's: SamplingParams.logprobs_processed
    return_token_ids: bool = False  # vLLM's: the prompt's and the output's token ids
    return_tokens_as_token_ids: bool = False  # vLLM's: logprobs name tokens `token_id:N`
    logprob_token_ids: list[int] | None = None  # vLLM's: listed instead of the top N
    timings_per_token: bool = False  # llama.cpp's: `timings` in every streamed chunk
    return_progress: bool = False  # llama.cpp's: `prompt_progress` chunks in a stream
    xtc_probability: float = 0.0  # llama.cpp's XTC sampler
    xtc_threshold: float = 0.1
    dry_multiplier: float = 0.0  # llama.cpp's DRY penalty (SamplingParams.dry): 0 off
    dry_base: float = 1.75
    dry_allowed_length: int = 2
    dry_penalty_last_n: int = -1
    dry_sequence_breakers: list[str] | None = None  # None: llama.cpp's defaults

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage

    @property
    def stop_list(self) -> list[str]:
        if self.stop is None:
            return []
        return [self.stop] if isinstance(self.stop, str) else list(self.stop)


class CompletionRequest(SamplingRequest):
    prompt: str | list[str] | list[int] | list[list[int]]
    logprobs: int | None = None  # the top N per token (0: the sampled token's only)
    echo: bool = False
    suffix: str | None = None  # text after the completion: a fill in the middle (fim.py)
    add_special_tokens: bool = True  # vLLM's: the tokenizer's BOS before a text prompt


class ChatCompletionRequest(SamplingRequest):
    messages: list[ChatMessage] = Field(min_length=1)
    logprobs: bool = False
    top_logprobs: int | None = None  # needs logprobs: true
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    chat_template_kwargs: dict[str, Any] | None = None
    tools: list[ToolDefinition] | None = None
    tool_choice: str | NamedToolChoice | None = None  # default: "auto" with tools
    parallel_tool_calls: bool = True
    include_reasoning: bool = True  # vLLM's: the reasoning read apart is in the answer
    reasoning_format: str | None = None  # llama.cpp's: "none" reads none apart
    add_special_tokens: bool = False  # vLLM's: the tokenizer's BOS before the rendered prompt
    documents: list[dict[str, str]] | None = None  # vLLM's: for retrieval-augmented templates
    echo: bool = False  # vLLM's: the last message's text before the answer's
    thinking_token_budget: int | None = None  # vLLM's: -1 (or null) none
    reasoning_effort: str | None = None  # OpenAI's: to the template, as vLLM gives it
    reasoning_budget_tokens: int | None = None  # llama.cpp's: < 0 (or null) none
    reasoning_budget_message: str = ""  # llama.cpp's: written before a budget's closing tag
    reasoning_budget_start_tag: str | None = None  # llama.cpp's: a block's tags (default:
    reasoning_budget_end_tag: str | None = None  # the reasoning parser's)
    reasoning_budget_arm_immediately: bool = False  # llama.cpp's: counted from the output's start


class GenerateRequest(RequestBase):
    """The seeds' /generate body."""

    prompt: str
    max_new_tokens: int = 64
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    stop_on_eos: bool = True
    do_sample: bool = False
    stream: bool = False
    seed: int | None = None
    stop: str | list[str] | None = None


# ---- responses (plain dicts: the exact OpenAI shapes, nulls where OpenAI has them) -------------


def new_id(prefix: str, sep: str = "-") -> str:
    return f"{prefix}{sep}{uuid.uuid4().hex}"


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


def completion_choice(
    index: int, text: str, finish_reason: str | None, logprobs: dict | None = None
) -> dict:
    return {"index": index, "text": text, "logprobs": logprobs, "finish_reason": finish_reason}


def chat_response(rid: str, created: int, model: str, choices: list[dict], use: dict) -> dict:
    return {
        "id": rid, "object": "chat.completion", "created": created, "model": model,
        "choices": choices, "usage": use, "system_fingerprint": None,
    }  # fmt: skip


def chat_choice(
    index: int,
    text: str | None,
    finish_reason: str | None,
    logprobs: dict | None = None,
    tool_calls: list[dict] | None = None,
) -> dict:
    """With tool calls, `content` is null unless the model also wrote text; `refusal` is
    always null (OpenAI's and vLLM's message have it: this engine writes no refusals)."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["content"] = text or None
        message["tool_calls"] = tool_calls
    return {
        "index": index,
        "message": message,
        "logprobs": logprobs,
        "finish_reason": finish_reason,
    }


def tool_call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_call_delta(index: int, call_id: str | None, name: str | None, arguments: str) -> dict:
    """A streamed call: id, type and name in its first delta, then argument fragments."""
    if call_id is None:
        return {"index": index, "function": {"arguments": arguments}}
    return {"index": index, **tool_call(call_id, name or "", arguments)}


def chat_chunk_choice(
    index: int, delta: dict, finish_reason: str | None, logprobs: dict | None = None
) -> dict:
    return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish_reason}


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
