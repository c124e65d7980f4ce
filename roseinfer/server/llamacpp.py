"""llama.cpp's native endpoints, for its server's clients: POST /completion (and /completions),
GET /props; GET /slots and POST /props answer 501, as llama.cpp's own server started without
them. (Its /apply-template, /tokenize and /detokenize are tokenization.py's.)

A /completion body is checked against its rows of the field table (`llamacpp_fields.py`: the
fields /v1/completions reads alike, and its own), read into the /v1/completions request it
describes (its prompt forms tokenized, `n_probs` as `logprobs`, its `logit_bias` forms as ids)
and run exactly as that endpoint runs it (`completions.sampling_requests`); the answer is
written in llama.cpp's shape (`llamacpp_output.py`): one result, or a list of them for several
prompts or `n` above 1; streamed, a `data:` event per new text and one `stop: true` result per
choice, and no `[DONE]`, as llama.cpp's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import Field

from roseinfer import __version__
from roseinfer.outputs import RequestFailed
from roseinfer.sampling_params import MAX_LOGPROBS, SamplingParams
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.chat_prompt import mixed_prompt_ids
from roseinfer.server.completions import SSE_HEADERS, run_to_end, sampling_requests
from roseinfer.server.context import ServingContext
from roseinfer.server.errors import APIError, failed_request_error, internal_error, validated
from roseinfer.server.llamacpp_output import (
    NativeOptions,
    PromptTexts,
    chunk,
    generation_settings,
    result,
)
from roseinfer.server.params import check_choices
from roseinfer.server.serving import GenerationGroup, dumps, sse_data
from roseinfer.tokenizer import Tokenizer

logger = logging.getLogger(__name__)

MAX_BIAS = 100.0  # a bias of `false` (llama.cpp: never drawn) is the floor of the range


class NativeFields(P.RequestBase):
    """The fields /completion reads in its own way (the rest are /v1/completions')."""

    prompt: str | list[int | str] | list[str | list[int | str]]
    n_probs: int | None = None
    logprobs: int | None = None  # llama.cpp's alias of n_probs
    logit_bias: list[list[int | str | float | bool]] | dict[str, float | bool] | None = None
    return_tokens: bool = False
    timings_per_token: bool = False
    response_fields: list[str] = Field(default_factory=list)


_OWN = frozenset(NativeFields.model_fields) - {"prompt"}


def native_prompts(tokenizer: Tokenizer, prompt: Any) -> list[list[int]]:
    """The token ids of each prompt: a string, ids, a list mixing both (one prompt: a BOS
    only before a leading string), or a list of strings and id lists (several)."""
    if isinstance(prompt, str) or any(isinstance(p, int) for p in prompt):
        prompts = [prompt]
    else:
        prompts = prompt
    if not prompts:
        raise APIError(400, "prompt must not be empty", param="prompt")
    out = []
    for i, p in enumerate(prompts):
        where = f"prompt[{i}]" if len(prompts) > 1 else "prompt"
        if not isinstance(p, str | list) or not all(isinstance(x, str | int) for x in p):
            raise APIError(400, f"{where}: a prompt is a string, token ids or a list mixing "
                                "them (llama.cpp's multimodal objects are not supported)",
                           param="prompt")  # fmt: skip
        ids = mixed_prompt_ids(tokenizer, p)
        if not ids:
            raise APIError(400, f"{where} must not be empty", param="prompt")
        out.append(ids)
    return out


def native_logit_bias(tokenizer: Tokenizer, bias: Any) -> dict[str, float] | None:
    """llama.cpp's `logit_bias` forms as /v1's `{token id: bias}`: pairs or an object, a token
    an id or a string (each of its tokens), a bias a number or `false` (-100); `true` asks
    for nothing, as llama.cpp's."""
    if bias is None:
        return None
    pairs = list(bias.items()) if isinstance(bias, dict) else bias
    out: dict[str, float] = {}
    for i, pair in enumerate(pairs):
        where = f"logit_bias[{i}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise APIError(400, f"{where} must be a [token, bias] pair", param="logit_bias")
        token, value = pair
        if value is True:
            continue
        if value is False:
            value = -MAX_BIAS
        if isinstance(token, str) and not (token.isascii() and token.isdigit()):
            ids = tokenizer.encode(token, add_special_tokens=False)
        elif isinstance(token, str | int) and not isinstance(token, bool):
            ids = [int(token)]
        else:
            raise APIError(400, f"{where}: a token is an id or a string", param="logit_bias")
        for tid in ids:
            if str(tid) in out and out[str(tid)] != value:
                raise APIError(400, f"{where} gives token {tid} a second bias",
                               param="logit_bias")  # fmt: skip
            out[str(tid)] = value
    return out or None


def completion_request(
    data: dict, tokenizer: Tokenizer
) -> tuple[P.CompletionRequest, list[list[int]], NativeOptions]:
    """A checked /completion body as the /v1/completions request it describes (its prompts
    tokenized), and what it asks of its result."""
    native = validated(NativeFields, {k: data[k] for k in (*_OWN, "prompt") if k in data})
    if native.n_probs is not None and native.logprobs is not None:
        if native.n_probs != native.logprobs:
            raise APIError(400, "n_probs and logprobs (its alias) differ: give one",
                           param="logprobs")  # fmt: skip
    n_probs = native.n_probs if native.n_probs is not None else native.logprobs or 0
    if not 0 <= n_probs <= MAX_LOGPROBS:
        raise APIError(400, f"n_probs must be in [0, {MAX_LOGPROBS}], got {n_probs}",
                       param="n_probs" if native.n_probs is not None else "logprobs")  # fmt: skip
    prompts = native_prompts(tokenizer, native.prompt)
    request = {k: v for k, v in data.items() if k not in _OWN}
    request["prompt"] = prompts
    request["logprobs"] = n_probs or None
    request["logit_bias"] = native_logit_bias(tokenizer, native.logit_bias)
    opts = NativeOptions(n_probs, native.return_tokens, native.timings_per_token,
                         tuple(native.response_fields))  # fmt: skip
    return validated(P.CompletionRequest, request), prompts, opts


def add_llamacpp_routes(router: APIRouter, ctx: ServingContext) -> None:
    """Add llama.cpp's native endpoints to `router` (the app's API-key-protected one, as
    llama.cpp protects them)."""
    tokenizer, model = ctx.tokenizer, ctx.model_name

    @router.post("/completion")
    @router.post("/completions")
    async def completion(request: Request) -> Response:
        data = await ctx.checked_body(request, F.LLAMACPP_COMPLETION)
        if "prompt" not in data:
            raise APIError(400, "prompt is required", param="prompt")
        body, prompts, opts = await asyncio.to_thread(completion_request, data, tokenizer)
        ctx.check_model(body.model)
        check_choices(body, len(prompts))
        # llama.cpp's n_predict left out: -1, what the context leaves (the model's own limit)
        prepared = await sampling_requests(ctx, body, prompts, ctx.defaults.max_tokens)
        group = GenerationGroup(ctx.client, P.new_id("cmpl"), prepared.requests)
        if body.stream:
            return StreamingResponse(_stream(group, model, opts), media_type="text/event-stream",
                                     headers=SSE_HEADERS)  # fmt: skip
        choices = await run_to_end(request, group, prepared.opts.constraint_param)
        if choices is None:
            return Response(status_code=499)  # the client is gone: nobody reads this

        def write() -> str:
            prompt_text = PromptTexts()
            results = []
            for i, c in choices:
                state = group.state_of(i)
                results.append(result(state, c, i, model, opts, False, prompt_text(state)))
            return dumps(results[0] if len(results) == 1 else results)

        return Response(await asyncio.to_thread(write), media_type="application/json")

    @router.get("/props")
    async def props() -> dict:
        engine, d = ctx.client.engine, ctx.defaults
        defaults = SamplingParams(temperature=d.temperature, top_p=d.top_p, top_k=d.top_k,
                                  min_p=d.min_p, repetition_penalty=d.repetition_penalty,
                                  max_tokens=d.max_tokens or ctx.max_total_tokens)  # fmt: skip
        settings = generation_settings(defaults, False)
        settings["n_predict"] = settings["max_tokens"] = d.max_tokens or -1
        hf = tokenizer.hf
        return {
            "default_generation_settings": {"params": settings, "n_ctx": ctx.max_model_len},
            "total_slots": engine.config.max_num_seqs,  # requests running at once
            "model_alias": model,
            # (the default model was given no path: its name)
            "model_path": engine.config.model or engine.config.checkpoint_path or model,
            "modalities": {"vision": False, "audio": False},
            "endpoint_slots": False,
            "endpoint_props": False,
            "endpoint_metrics": True,
            "chat_template": getattr(hf, "chat_template", None) or "",
            "bos_token": hf.bos_token or "",
            "eos_token": hf.eos_token or "",
            "build_info": f"roseinfer {__version__}",
        }

    @router.post("/props")
    async def set_props() -> Response:
        return _not_supported("This server's properties cannot be changed (POST /props)")

    @router.get("/slots")
    async def slots() -> Response:
        return _not_supported("This server has no slots (GET /slots): requests share one "
                              "continuously batched engine; /metrics has its queue and "
                              "KV-cache use")  # fmt: skip


def _not_supported(message: str) -> Response:
    """llama.cpp's 501 for an endpoint its server was started without."""
    return JSONResponse({"error": {"code": 501, "message": message,
                                   "type": "not_supported_error"}}, status_code=501)  # fmt: skip


async def _stream(group: GenerationGroup, model: str, opts: NativeOptions) -> AsyncIterator[str]:
    """llama.cpp's stream: a chunk per new text (its tokens, probabilities), a `stop: true`
    result as each choice finishes; an error as an `{"error": ...}` event, then the end."""
    sent: dict[int, int] = {}  # tokens of each choice sent so far
    prompt_text = PromptTexts()
    async with group:
        try:
            async for index, choice, text in group.events():
                state = group.state_of(index)
                ids = choice.token_ids[sent.get(index, 0) :]
                sent[index] = len(choice.token_ids)
                if text or ids:
                    positions = (choice.logprobs or [])[len(choice.token_ids) - len(ids) :]
                    yield sse_data(chunk(state, choice, index, text, ids, positions, opts))
                if choice.finished:  # (the prompt's text: decoded once, off the loop)
                    text_of = await asyncio.to_thread(prompt_text, state)
                    yield sse_data(result(state, choice, index, model, opts, True, text_of))
        except RequestFailed as e:
            yield sse_data(failed_request_error(e).body())
        except Exception as e:  # a bug while processing this request: fail it alone
            logger.exception("error while streaming a /completion")
            yield sse_data(internal_error(e).body())
