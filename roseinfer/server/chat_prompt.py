"""A body's prompts as token ids, their errors as 400s: a chat body's through the one renderer
(`roseinfer.chat`; the field that cannot act named in `param`, a template's refusal of the
messages under `messages`), the prompt lists of /v1/completions' `prompt` and
/v1/embeddings' `input`, and llama.cpp's prompts mixing text and token ids."""

from __future__ import annotations

from typing import Any

from roseinfer.chat import ChatError, ChatMessage, chat_prompt_text
from roseinfer.llm import encode_prompt
from roseinfer.server.errors import APIError
from roseinfer.structured.tools import Tool
from roseinfer.tokenizer import Tokenizer, TokenizerError


def request_prompt_ids(
    tokenizer: Tokenizer,
    messages: list[ChatMessage],
    tools: tuple[Tool, ...],
    add_generation_prompt: bool,
    continue_final_message: bool,
    template_kwargs: dict[str, Any] | None,
    add_special_tokens: bool = False,
    documents: list[dict[str, str]] | None = None,
    reasoning_effort: str | None = None,
) -> list[int]:
    """The rendered prompt's ids; the template wrote its special tokens, so the tokenizer's
    own (a BOS) come on top only with `add_special_tokens` (vLLM's chat field)."""
    text = request_prompt_text(tokenizer, messages, tools, add_generation_prompt,
                               continue_final_message, template_kwargs, documents,
                               reasoning_effort)  # fmt: skip
    return tokenizer.encode(text, add_special_tokens)


def request_prompt_text(
    tokenizer: Tokenizer,
    messages: list[ChatMessage],
    tools: tuple[Tool, ...],
    add_generation_prompt: bool,
    continue_final_message: bool,
    template_kwargs: dict[str, Any] | None,
    documents: list[dict[str, str]] | None = None,
    reasoning_effort: str | None = None,
) -> str:
    try:
        return chat_prompt_text(tokenizer, messages, tools, add_generation_prompt,
                                continue_final_message, template_kwargs, documents,
                                reasoning_effort)  # fmt: skip
    except ChatError as e:
        raise APIError(400, str(e), param=e.param, code=e.code) from None
    except TokenizerError as e:
        raise APIError(400, str(e), param="messages") from None


def num_prompts(prompt: str | list) -> int:
    """How many prompts a `prompt` (or `input`) holds, before tokenizing any."""
    if isinstance(prompt, str) or all(isinstance(t, int) for t in prompt):
        return 1
    return len(prompt)


def prompt_lists(
    tokenizer: Tokenizer, prompt: str | list, param: str, add_special_tokens: bool = True
) -> list[list[int]]:
    """Token ids of each prompt: a string, a list of strings, a token-id list or a list of
    those; `param`: the field that holds them (`prompt`, `input`); a string's with the
    tokenizer's special tokens (a BOS) unless `add_special_tokens` is false."""
    if isinstance(prompt, str):
        prompt = [prompt]
    if not prompt:
        raise APIError(400, f"{param} must not be empty", param=param)
    if all(isinstance(t, int) for t in prompt):
        prompt = [prompt]
    out = []
    for i, p in enumerate(prompt):
        try:
            out.append(encode_prompt(tokenizer, p, param, add_special_tokens)
                       if isinstance(p, str) else list(p))  # fmt: skip
        except ValueError as e:
            raise APIError(
                400, f"{param}[{i}]: {e}" if len(prompt) > 1 else str(e), param=param
            ) from None
        if not out[-1]:
            raise APIError(400, f"{param} must not be empty", param=param)
    return out


def mixed_prompt_ids(
    tokenizer: Tokenizer,
    parts: str | list[int | str],
    add_special: bool = True,
    parse_special: bool = True,
) -> list[int]:
    """llama.cpp's prompt of text and token ids mixed (`[12, " text", 34]`): each string
    tokenized in place, the special tokens (a BOS) added only before a leading string where
    `add_special`; `parse_special` false reads a special token's text as plain text."""
    ids: list[int] = []
    for j, part in enumerate([parts] if isinstance(parts, str) else parts):
        if isinstance(part, str):
            ids += tokenizer.encode(part, add_special and j == 0, not parse_special)
        else:
            ids.append(part)
    return ids
