"""POST /tokenize and POST /detokenize, with vLLM's request and response shapes and
llama.cpp's, and llama.cpp's POST /apply-template.

/tokenize takes a prompt (`{model?, prompt, add_special_tokens=true, return_token_strs=false}`)
or chat messages (`{model?, messages, add_generation_prompt=true, continue_final_message=false,
chat_template_kwargs?, tools?, return_token_strs=false}`) and answers `{count, max_model_len, tokens,
token_strs}`; or llama.cpp's `{model?, content, add_special=false, parse_special=true,
with_pieces=false}` (`content` text, or text and ids mixed) and answers its `{tokens}` (ids, or
`{id, piece}` each). /detokenize takes `{model?, tokens}` and answers `{prompt, content}` (vLLM's
key and llama.cpp's). /apply-template takes the chat form (without `return_token_strs`) and
answers `{prompt}`: the text of the prompt /v1/chat/completions would run (the template's text,
whose tokens that endpoint runs); a last assistant message is left open, as llama.cpp prefills
it, unless the request says otherwise.

Nothing is accepted and ignored, as on the other endpoints (fields.py): a field these models do
not declare is a 400 naming it; the chat form's template fields are the chat table's own
(`body_check.check_body` with the /v1/chat/completions table), so /tokenize renders messages
exactly as /v1/chat/completions does (the tools too) and refuses what it refuses
(`add_special_tokens: true`, `chat_template`, ...), and its `tokens` are the prompt that
endpoint would run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from pydantic import Field, ValidationError

from roseinfer.chat import ChatError, ChatMessage, ToolDefinition, read_tools
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.body_check import FieldError, check_body
from roseinfer.server.chat_prompt import mixed_prompt_ids, request_prompt_text
from roseinfer.server.errors import APIError, from_validation_error
from roseinfer.server.jsonbody import read_request_json
from roseinfer.tokenizer import Tokenizer


class TokenizeCompletionRequest(P.RequestBase):
    model: str | None = None
    prompt: str
    add_special_tokens: bool = True
    return_token_strs: bool = False


class ApplyTemplateRequest(P.RequestBase):
    """The chat form: llama.cpp's /apply-template, and /tokenize's with its own field."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    chat_template_kwargs: dict[str, Any] | None = None
    tools: list[ToolDefinition] | None = None


class TokenizeChatRequest(ApplyTemplateRequest):
    return_token_strs: bool = False
    add_special_tokens: bool = False  # (the chat table's field: the chat endpoint's default)
    documents: list[dict[str, str]] | None = None  # (the chat table's field)


class LlamaTokenizeRequest(P.RequestBase):
    """llama.cpp's /tokenize: `content`, its defaults (no BOS; special tokens' text parsed)."""

    model: str | None = None
    content: str | list[int | str]
    add_special: bool = False
    parse_special: bool = True
    with_pieces: bool = False


class DetokenizeRequest(P.RequestBase):
    model: str | None = None
    tokens: list[int]


# Fields of vLLM's TokenizeChatRequest that /v1/chat/completions refuses unless neutral: the
# chat table decides them here too (they never reach pydantic, being refused or no-ops).
_CHAT_TABLE_ONLY = ("chat_template", "mm_processor_kwargs")
# The fields of the chat form that come from the chat table (the rest are /tokenize's own).
_FROM_CHAT_TABLE = frozenset(
    {"messages", "add_generation_prompt", "continue_final_message", "chat_template_kwargs", "tools",
     "add_special_tokens", "documents"}
    | set(_CHAT_TABLE_ONLY)
)  # fmt: skip

ModelT = TypeVar("ModelT", bound=P.RequestBase)


async def _json_object(request: Request) -> dict[str, Any]:
    data = await read_request_json(request)
    if not isinstance(data, dict):
        raise APIError(400, "the request body must be a JSON object", code="invalid_value")
    return data


def _validate(model: type[ModelT], data: dict[str, Any], path: str) -> ModelT:
    """`data` as `model`: a 400 naming the first field the model does not declare (whatever its
    value, as fields.py), or the first invalid one; null is the field left out."""
    for key in data:
        if key not in model.model_fields:
            raise APIError(400, f"'{key}' is not a field of {path} here", param=key,
                           code="unknown_field")  # fmt: skip
    try:
        return model.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as e:
        raise from_validation_error(e.errors()) from None


ChatFormT = TypeVar("ChatFormT", bound=ApplyTemplateRequest)


def _chat_form(data: dict[str, Any], model: type[ChatFormT], path: str) -> ChatFormT:
    shared = {k: v for k, v in data.items() if k in _FROM_CHAT_TABLE}
    try:
        shared = check_body(shared, F.CHAT)
    except FieldError as e:
        raise e.api_error() from None
    own = {k: v for k, v in data.items() if k not in _FROM_CHAT_TABLE}
    return _validate(model, {**own, **shared}, path)


def _chat_text(
    tokenizer: Tokenizer,
    body: ApplyTemplateRequest,
    documents: list[dict[str, str]] | None = None,
) -> str:
    """The prompt /v1/chat/completions renders for the chat form (its ids: the text's)."""
    try:  # the tools are shown as the chat endpoint shows them; how calls are made is not asked
        tools, _ = read_tools(body.tools, "none")
    except ChatError as e:
        raise APIError(400, str(e), param=e.param) from None
    return request_prompt_text(tokenizer, body.messages, tools, body.add_generation_prompt,
                               body.continue_final_message, body.chat_template_kwargs,
                               documents)  # fmt: skip


def _chat_ids(tokenizer: Tokenizer, body: TokenizeChatRequest) -> list[int]:
    # (the template wrote its BOS; the tokenizer's only with add_special_tokens, as chat's)
    return tokenizer.encode(_chat_text(tokenizer, body, body.documents), body.add_special_tokens)


def _llama_tokens(tokenizer: Tokenizer, body: LlamaTokenizeRequest) -> list[Any]:
    """llama.cpp's `tokens`: ids, or with `with_pieces` `{id, piece}` each, the piece its text
    where that is whole UTF-8, else its bytes."""
    if isinstance(body.content, list):
        _check_ids(tokenizer, body.content, "content")
    ids = mixed_prompt_ids(tokenizer, body.content, body.add_special, body.parse_special)
    if not body.with_pieces:
        return ids
    pieces: list[Any] = []
    for token_id in ids:
        raw = tokenizer.token_bytes(token_id)
        try:
            piece: str | list[int] = raw.decode("utf-8")
        except UnicodeDecodeError:
            piece = list(raw)
        pieces.append({"id": token_id, "piece": piece})
    return pieces


def _check_ids(
    tokenizer: Tokenizer, ids: list[int] | list[int | str], field: str = "tokens"
) -> None:
    """Each id of the vocabulary (in llama.cpp's mixed `content`, the strings between them
    are text)."""
    for i, token_id in enumerate(ids):
        if isinstance(token_id, int) and not 0 <= token_id < tokenizer.vocab_size:
            raise APIError(400, f"{field}[{i}]: {token_id} is not a token id of this model "
                                f"(0 to {tokenizer.vocab_size - 1})",
                           param=f"{field}.{i}", code="invalid_value")  # fmt: skip


def _detokenize(tokenizer: Tokenizer, ids: list[int]) -> str:
    _check_ids(tokenizer, ids)
    return tokenizer.decode(ids, skip_special_tokens=False)  # special tokens kept, as vLLM


def add_tokenization_routes(
    router: APIRouter,
    tokenizer: Tokenizer,
    max_model_len: int,
    check_model: Callable[[str | None], None],
) -> None:
    """Add the two routes to `router` (the app's API-key-protected one, as vLLM protects them);
    `check_model` answers 404 for a model name that is not the served one."""

    @router.post("/tokenize")
    async def tokenize(request: Request) -> dict:
        data = await _json_object(request)
        body: TokenizeChatRequest | TokenizeCompletionRequest
        if data.get("content") is not None:  # llama.cpp's form, and its answer
            native = _validate(LlamaTokenizeRequest, data, "/tokenize (llama.cpp's content)")
            check_model(native.model)
            return {"tokens": await asyncio.to_thread(_llama_tokens, tokenizer, native)}
        if data.get("messages") is not None:
            body = _chat_form(data, TokenizeChatRequest, "/tokenize (chat messages)")
            check_model(body.model)
            ids = await asyncio.to_thread(_chat_ids, tokenizer, body)  # as the chat endpoint
        else:
            body = _validate(TokenizeCompletionRequest, data, "/tokenize (a prompt)")
            check_model(body.model)
            ids = await asyncio.to_thread(tokenizer.encode, body.prompt, body.add_special_tokens)
        strs = None
        if body.return_token_strs:  # (a 4 MB prompt's: a second, off the loop)
            strs = await asyncio.to_thread(tokenizer.hf.convert_ids_to_tokens, ids)
        return {"count": len(ids), "max_model_len": max_model_len, "tokens": ids,
                "token_strs": strs}  # fmt: skip

    @router.post("/detokenize")
    async def detokenize(request: Request) -> dict:
        data = await _json_object(request)
        body: DetokenizeRequest = _validate(DetokenizeRequest, data, "/detokenize")
        check_model(body.model)
        # Off the loop: half a million ids take a quarter of a second to check and decode.
        text = await asyncio.to_thread(_detokenize, tokenizer, body.tokens)
        return {"prompt": text, "content": text}  # vLLM's key, and llama.cpp's

    @router.post("/apply-template")
    async def apply_template(request: Request) -> dict:
        """llama.cpp's: the prompt /v1/chat/completions would run for these messages, as
        text (`{"prompt"}`); the chat form of /tokenize, written out."""
        data = await _json_object(request)
        body = _chat_form(data, ApplyTemplateRequest, "/apply-template")
        check_model(body.model)
        asked = {"add_generation_prompt", "continue_final_message"} & body.model_fields_set
        if body.messages[-1].role == "assistant" and not asked:
            # llama.cpp's: a last assistant message is the answer's start (prefilled), its
            # text left open for /completion to continue
            body = body.model_copy(
                update={"add_generation_prompt": False, "continue_final_message": True}
            )
        return {"prompt": await asyncio.to_thread(_chat_text, tokenizer, body)}
