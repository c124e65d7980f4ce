"""POST /v1/embeddings: OpenAI's Embeddings API over the served (generative) model.

Each input is one engine request of its own kind (`LLMEngine.add_pooling_request`): its prompt
is computed as any prompt is (batched with the running requests, chunked, served in part by the
prefix cache), and its result is the model's final hidden state at its last token, L2-normalized
by default: vLLM's pooling of decoder-only models served for embeddings. Nothing is generated.
The vectors are those of a model trained to continue text, not of one trained for retrieval:
a starting point, or a way to compare text as this model reads it. vLLM's chat form takes
`messages` instead of `input`: the conversation rendered as chat renders it, one vector.

The answer is OpenAI's shape: `{"object": "list", "data": [{"object": "embedding", "index",
"embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}` with vLLM's `id` and
`created`, the vector a list of floats or, with `encoding_format: "base64"`, its float32 bytes
in base64 (the openai SDK asks for that by default and decodes it).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any, Literal

import torch
from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import Field

from roseinfer.chat import ChatMessage
from roseinfer.engine.client import EngineClient
from roseinfer.engine.requests import InvalidRequestError
from roseinfer.outputs import RequestFailed
from roseinfer.pooling_params import PoolingParams
from roseinfer.server import protocol as P
from roseinfer.server.chat_prompt import num_prompts, prompt_lists, request_prompt_ids
from roseinfer.server.context import ServingContext
from roseinfer.server.embeddings_fields import EMBEDDINGS
from roseinfer.server.errors import APIError, failed_request_error, validated
from roseinfer.server.json_text import dumps
from roseinfer.server.params import truncate_prompt
from roseinfer.server.request_io import ClientDisconnected, given_request_id, until_disconnected
from roseinfer.tokenizer import Tokenizer

# OpenAI's limit on one request's inputs; each is a request of its own in the engine.
MAX_INPUTS = 2048


class EmbeddingRequest(P.RequestBase):
    input: str | list[str] | list[int] | list[list[int]] | None = None
    messages: list[ChatMessage] | None = None  # vLLM's chat form, instead of input
    add_generation_prompt: bool = False  # (vLLM's default for embeddings; chat's is true)
    continue_final_message: bool = False
    chat_template_kwargs: dict[str, Any] | None = None
    add_special_tokens: bool | None = None  # vLLM's; None: its form's default
    model: str | None = None
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = None
    normalize: bool | None = None
    use_activation: bool | None = None
    endianness: Literal["native", "little", "big"] = "native"
    truncate_prompt_tokens: int | None = None
    truncation_side: Literal["left", "right"] = "left"
    request_id: str | None = Field(default=None, min_length=1)

    def pooling(self) -> PoolingParams:
        """`normalize`, or vLLM's newer name for it; true where neither is given."""
        given = {v for v in (self.normalize, self.use_activation) if v is not None}
        if len(given) > 1:
            raise APIError(400, "normalize and use_activation (its newer name) disagree",
                           param="use_activation")  # fmt: skip
        return PoolingParams(normalize=given.pop() if given else True)


_BYTE_ORDER = {"native": "=", "little": "<", "big": ">"}


def encode_vector(vector: torch.Tensor, body: EmbeddingRequest) -> list[float] | str:
    """One embedding as the response writes it ([hidden] float32)."""
    if body.encoding_format == "base64":
        values = vector.numpy().astype(_BYTE_ORDER[body.endianness] + "f4")
        return base64.b64encode(values.tobytes()).decode("ascii")
    return vector.tolist()


def response_body(vectors: list[torch.Tensor], body: EmbeddingRequest, response_id: str,
                  model_name: str, prompt_tokens: int) -> str:  # fmt: skip
    """OpenAI's answer, with vLLM's `id` and `created` beside it."""
    data = [
        {"object": "embedding", "index": i, "embedding": encode_vector(v, body)}
        for i, v in enumerate(vectors)
    ]
    usage = {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}
    return dumps({"id": response_id, "object": "list", "created": P.now(), "model": model_name,
                  "data": data, "usage": usage})  # fmt: skip


async def embed_all(
    client: EngineClient, request_id: str, prompts: list[list[int]], pooling: PoolingParams
) -> list[torch.Tensor]:
    """Every input's vector, in order; the first failure fails the request, and the inputs
    still running are aborted (as they are when the client leaves)."""
    tasks = [
        asyncio.ensure_future(client.embed(f"{request_id}-{i}", ids, pooling))
        for i, ids in enumerate(prompts)
    ]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()  # (a finished one ignores it; a running one aborts its request)


async def pooled(
    ctx: ServingContext,
    request: Request,
    request_id: str,
    prompts: list[list[int]],
    pooling: PoolingParams,
    field: str | list[str],
) -> list[torch.Tensor] | None:
    """Each prompt's vector, checked and queued as the engine will take them (a 400 naming
    `field`, the body's field of the prompts, or of each prompt; a 503 past the queue's
    limit); None where the client leaves first (what still runs is aborted)."""
    engine = ctx.client.engine
    fields = [field] * len(prompts) if isinstance(field, str) else field
    for i, ids in enumerate(prompts):
        try:
            engine.validate_pooling(ids)
        except InvalidRequestError as e:
            name, index = fields[i], fields[:i].count(fields[i])  # (its place in its field)
            where = f"{name}[{index}]: " if fields.count(name) > 1 else f"{name}: "
            raise APIError(400, where + str(e), param=name, code=e.code) from None
    ctx.check_capacity(len(prompts))
    try:
        return await until_disconnected(
            request, embed_all(ctx.client, request_id, prompts, pooling)
        )
    except ClientDisconnected:
        return None
    except RequestFailed as e:
        raise failed_request_error(
            e, field if isinstance(field, str) else field[0], "embedding"
        ) from None


def add_embedding_routes(router: APIRouter, ctx: ServingContext) -> None:
    """Add POST /v1/embeddings to `router` (the app's API-key-protected one)."""
    engine, model_name = ctx.client.engine, ctx.model_name
    hidden_size = engine.model_config.hidden_size

    @router.post("/v1/embeddings")
    async def embeddings(request: Request) -> Response:
        body = validated(EmbeddingRequest, await ctx.checked_body(request, EMBEDDINGS))
        ctx.check_model(body.model)
        if body.dimensions is not None and body.dimensions != hidden_size:
            raise APIError(400, f"dimensions must be this model's hidden size, {hidden_size}, "
                                f"got {body.dimensions}: its vectors are not trained to be cut "
                                "shorter", param="dimensions")  # fmt: skip
        prompts = [
            truncate_prompt(
                ids, body.truncate_prompt_tokens, engine.max_model_len, body.truncation_side
            )  # fmt: skip
            for ids in await _prompts(engine.tokenizer, body)
        ]
        field = "input" if body.messages is None else "messages"  # (the form the body sent)
        internal_id = P.new_id("embd")  # the engine's ids stay ours; the client's names the answer
        given_id = given_request_id(request, body.request_id)
        response_id = internal_id if given_id is None else f"embd-{given_id}"
        vectors = await pooled(ctx, request, internal_id, prompts, body.pooling(), field)
        if vectors is None:
            return Response(status_code=499)  # the client is gone: nobody reads this
        prompt_tokens = sum(len(ids) for ids in prompts)
        content = await asyncio.to_thread(
            response_body, vectors, body, response_id, model_name, prompt_tokens
        )
        return Response(content, media_type="application/json")


async def _prompts(tokenizer: Tokenizer, body: EmbeddingRequest) -> list[list[int]]:
    """The token ids of each input, or of the conversation (`messages`), rendered as chat's."""
    if body.messages is not None:
        if body.input is not None:
            raise APIError(400, "give input or messages, not both", param="messages")
        return [await asyncio.to_thread(request_prompt_ids, tokenizer, body.messages, (),
                                        body.add_generation_prompt, body.continue_final_message,
                                        body.chat_template_kwargs,
                                        bool(body.add_special_tokens))]  # fmt: skip
    if body.input is None:
        raise APIError(400, "input is required (or vLLM's messages)", param="input")
    # (their neutral values ask for nothing: accepted beside input)
    asked = {"add_generation_prompt": body.add_generation_prompt,
             "continue_final_message": body.continue_final_message,
             "chat_template_kwargs": bool(body.chat_template_kwargs)}  # fmt: skip
    for name, value in asked.items():
        if value:
            raise APIError(400, f"{name} acts on messages only", param=name)
    if num_prompts(body.input) > MAX_INPUTS:
        raise APIError(400, f"input holds {num_prompts(body.input)} inputs: at most "
                            f"{MAX_INPUTS} in one request", param="input")  # fmt: skip
    add = body.add_special_tokens is not False  # (the input form's default: true)
    return await asyncio.to_thread(prompt_lists, tokenizer, body.input, "input", add)
