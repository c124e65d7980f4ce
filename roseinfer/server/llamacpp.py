"""llama.cpp's native endpoints, for its server's clients: POST /completion (and /completions),
POST /infill (a fill in the middle: fim.py builds its prompt, then it runs as /completion),
POST /embedding (and /embeddings), GET /props; GET /slots and POST /props answer 501, as
llama.cpp's own server started without them. (Its /apply-template, /tokenize and /detokenize
are tokenization.py's.)

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
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

import torch
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import Field

from roseinfer import __version__
from roseinfer.fim import NoFimTokens, infill_prompt
from roseinfer.outputs import PromptProgress, RequestFailed
from roseinfer.pooling_params import PoolingParams
from roseinfer.sampling_params import MAX_LOGPROBS, SamplingDefaults
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server import sampler_chain
from roseinfer.server.chat_prompt import mixed_prompt_ids
from roseinfer.server.completions import run_to_end, sampling_requests
from roseinfer.server.context import ServingContext
from roseinfer.server.embeddings import MAX_INPUTS, pooled
from roseinfer.server.errors import APIError, failed_request_error, internal_error, validated
from roseinfer.server.generation import SSE_HEADERS, GenerationGroup, sse_data
from roseinfer.server.json_text import dumps
from roseinfer.server.llamacpp_forms import fold_aliases, native_logit_bias, truncated
from roseinfer.server.llamacpp_output import (
    NativeOptions,
    PromptTexts,
    chunk,
    generation_settings,
    progress_json,
    result,
)
from roseinfer.server.params import MAX_CHOICES, check_choices
from roseinfer.tokenizer import Tokenizer

logger = logging.getLogger(__name__)

# llama.cpp's defaults (`common_params_sampling`) of the fields a /completion or /infill body
# leaves out (or sends as null), where the model's file gives none (in llama.cpp a GGUF's
# `general.sampling.*` wins over them too): 0.8, 40, 0.95, 0.05 and the penalties' window of 64
# tokens; its other samplers' defaults are neutral here as there, and /v1's defaults stay
# vLLM's (the model's, or OpenAI's)
LLAMACPP_SAMPLING = SamplingDefaults(temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
                                     penalty_last_n=64)  # fmt: skip
# SamplingDefaults' names of them -> the request's
_LLAMACPP_FIELDS = {"temperature": "temperature", "top_k": "top_k", "top_p": "top_p",
                    "min_p": "min_p", "penalty_last_n": "repeat_last_n"}  # fmt: skip


def llamacpp_defaults(model: SamplingDefaults) -> SamplingDefaults:
    """What /completion gives a field a body leaves out: the model's where its file sets it,
    else llama.cpp's."""
    theirs: dict[str, Any] = {
        k: getattr(LLAMACPP_SAMPLING, k) for k in _LLAMACPP_FIELDS if k not in model.given
    }
    return dataclasses.replace(model, **theirs)


MAX_NORM = 2**31 - 1  # embd_normalize: llama.cpp reads an int


class NativeFields(P.RequestBase):
    """The fields /completion reads in its own way (the rest are /v1/completions')."""

    prompt: Any  # its forms: `native_prompts`, which names what is wrong with one
    n_probs: int | None = None
    logprobs: int | None = None  # llama.cpp's alias of n_probs
    logit_bias: list[list[Any]] | dict[str, Any] | None = None  # `native_logit_bias`
    return_tokens: bool = False
    timings_per_token: bool = False
    response_fields: list[str] = Field(default_factory=list)
    # ooba's (SillyTavern sends them): llamacpp_forms.py
    add_bos_token: bool = True
    custom_token_bans: str = ""
    truncation_length: int | None = None


_READ_HERE = frozenset(NativeFields.model_fields)  # (the rest go to CompletionRequest)


def prompt_list(prompt: Any, field: str = "prompt") -> list[Any]:
    """The prompts of a `prompt` (`field`: the body's name of it) before any is tokenized: a
    string, or a list holding any token id, is one (llama.cpp's rule); another list holds
    several."""
    if isinstance(prompt, str) or (isinstance(prompt, list) and any(
        isinstance(p, int) and not isinstance(p, bool) for p in prompt
    )):  # fmt: skip
        return [prompt]
    if not isinstance(prompt, list):
        raise APIError(400, f"{field} is a string, token ids, a list mixing them, or a list "
                            "of those", param=field)  # fmt: skip
    return prompt


def native_prompts(
    tokenizer: Tokenizer, prompt: Any, field: str = "prompt", add_special: bool = True
) -> list[list[int]]:
    """The token ids of each prompt: a string, ids, a list mixing both (one prompt: a BOS
    only before a leading string, where `add_special`), or a list of strings and id lists
    (several)."""
    prompts = prompt_list(prompt, field)
    if not prompts:
        raise APIError(400, f"{field} must not be empty", param=field)
    out = []
    for i, p in enumerate(prompts):
        where = f"{field}[{i}]" if len(prompts) > 1 else field
        parts = [p] if isinstance(p, str) else p
        if not isinstance(parts, list) or not all(
            isinstance(x, str | int) and not isinstance(x, bool) for x in parts
        ):
            raise APIError(400, f"{where}: a prompt is a string, token ids or a list mixing "
                                "them (llama.cpp's multimodal objects are not supported)",
                           param=field)  # fmt: skip
        ids = mixed_prompt_ids(tokenizer, parts, add_special)
        if not ids:
            raise APIError(400, f"{where} must not be empty", param=field)
        out.append(ids)
    return out


def native_fields(data: dict) -> NativeFields:
    """What a checked /completion body asks in its own way, before anything is tokenized:
    a request of more prompts than one request may hold is refused here. Other servers' names
    of its fields are read as llama.cpp's (`fold_aliases`, in `data`)."""
    fold_aliases(data)
    native = validated(NativeFields, {k: data[k] for k in _READ_HERE if k in data})
    count = len(prompt_list(native.prompt))
    if count > MAX_CHOICES:
        raise APIError(400, f"{count} prompts: at most {MAX_CHOICES} in one request",
                       param="prompt")  # fmt: skip
    return native


def completion_request(
    data: dict, native: NativeFields, tokenizer: Tokenizer, n_ctx: int, prefix_cache: bool,
    defaults: SamplingDefaults,
) -> tuple[P.CompletionRequest, list[list[int]], NativeOptions]:  # fmt: skip
    """A checked /completion body as the /v1/completions request it describes (its prompts
    tokenized), and what it asks of its result (`n_ctx`: the most a prompt and its output
    may hold; `prefix_cache`: whether the engine keeps computed prompts, which `n_predict`
    0 is for; `defaults`: `llamacpp_defaults`, of the fields the body leaves out)."""
    if native.n_probs is not None and native.logprobs is not None:
        if native.n_probs != native.logprobs:
            raise APIError(400, "n_probs and logprobs (its alias) differ: give one",
                           param="logprobs")  # fmt: skip
    n_probs = native.n_probs if native.n_probs is not None else native.logprobs or 0
    if not 0 <= n_probs <= MAX_LOGPROBS:
        raise APIError(400, f"n_probs must be in [0, {MAX_LOGPROBS}], got {n_probs}",
                       param="n_probs" if native.n_probs is not None else "logprobs")  # fmt: skip
    prompts = native_prompts(tokenizer, native.prompt, add_special=native.add_bos_token)
    request = {k: v for k, v in data.items() if k not in _READ_HERE}
    asked = [v for k in ("n_predict", "max_tokens", "max_completion_tokens")
             if type(v := request.get(k)) is int]  # fmt: skip
    prompts = truncated(prompts, native.truncation_length, max(asked, default=0))
    request.setdefault(
        "samplers", list(sampler_chain.LLAMACPP_DEFAULT_SAMPLERS)
    )  # (temperature last)
    for name, field in _LLAMACPP_FIELDS.items():
        if request.get(field) is None:
            request[field] = getattr(defaults, name)
    # n_predict 0 (any of its names, none other): the prompt alone, run to one token
    limits = [k for k in ("n_predict", "max_tokens", "max_completion_tokens") if k in request]
    prompt_only = bool(limits) and all(type(request[k]) is int and request[k] == 0 for k in limits)
    if prompt_only and not prefix_cache:
        raise APIError(400, "0 asks for the prompt alone, computed into the prefix cache, "
                            "which this server keeps none of (--no-prefix-cache)",
                       param=limits[0])  # fmt: skip
    if prompt_only:
        request.update(dict.fromkeys(limits, 1))
    request["prompt"] = prompts
    request["logprobs"] = n_probs or None
    request["logit_bias"] = native_logit_bias(tokenizer, native.logit_bias,
                                              native.custom_token_bans)  # fmt: skip
    body = validated(P.CompletionRequest, request)
    opts = NativeOptions(n_ctx, n_probs, body.post_sampling_probs, native.return_tokens,
                         native.timings_per_token, tuple(native.response_fields),
                         prompt_only)  # fmt: skip
    return body, prompts, opts


class ExtraFile(P.RequestBase):
    text: str
    filename: str = "tmp"  # (llama.cpp's)
    time: int | float | None = None  # llama.vim's: when it read the chunk (a no-op: read by none)


class InfillFields(P.RequestBase):
    """/infill's own fields (the rest are /completion's)."""

    input_prefix: str
    input_suffix: str
    input_extra: list[ExtraFile] = Field(default_factory=list)
    prompt: str = ""


_INFILL = frozenset(InfillFields.model_fields)


class EmbeddingFields(P.RequestBase):
    """llama.cpp's /embedding body."""

    content: Any = None  # /completion's prompt forms (`native_prompts`)
    input: Any = None  # its alias
    embd_normalize: int = 2
    model: str | None = None


def normalized(vector: torch.Tensor, norm: int) -> torch.Tensor:
    """llama.cpp's `common_embd_normalize` ([hidden] float32): -1 none; 0 the largest
    magnitude scaled to 32,760 (int16's range); p >= 1 that p-norm (2: Euclidean), computed
    over the values scaled by the largest magnitude, so that a large p neither overflows nor
    underflows (it tends to that magnitude); a vector of zeros comes back as it is."""
    if norm == -1:
        return vector
    x = vector.double()
    largest = x.abs().max()
    if largest == 0:
        return vector
    if norm == 0:
        return (x * (32760.0 / largest)).float()
    size = largest * (x.abs() / largest).pow(norm).sum().pow(1.0 / norm)
    return (x / size).float()


def add_llamacpp_routes(router: APIRouter, ctx: ServingContext) -> None:
    """Add llama.cpp's native endpoints to `router` (the app's API-key-protected one, as
    llama.cpp protects them)."""
    tokenizer, model = ctx.tokenizer, ctx.model_name
    prefix_cache = ctx.client.engine.config.enable_prefix_cache
    defaults = llamacpp_defaults(ctx.defaults)

    @router.post("/completion")
    @router.post("/completions")
    async def completion(request: Request) -> Response:
        return await run_native(request, await ctx.checked_body(request, F.LLAMACPP_COMPLETION))

    @router.post("/infill")
    async def infill(request: Request) -> Response:
        """llama.cpp's fill in the middle: its prompt built (fim.py), then run as /completion
        runs one; a model without FIM tokens is llama.cpp's 501."""
        data = await ctx.checked_body(request, F.LLAMACPP_INFILL)
        fields = validated(InfillFields, {k: data.pop(k) for k in _INFILL if k in data})
        try:
            fim = ctx.fim_tokens()
        except NoFimTokens as e:
            return _not_supported(f"Infill is not supported: {e}")
        n_predict = next((data[k] for k in ("n_predict", "max_tokens", "max_completion_tokens")
                          if isinstance(data.get(k), int) and data[k] > 0), 0)  # fmt: skip
        extra = [(chunk.filename, chunk.text) for chunk in fields.input_extra]
        data["prompt"] = await asyncio.to_thread(
            infill_prompt, tokenizer, fim, fields.input_prefix, fields.input_suffix, extra,
            fields.prompt, ctx.max_total_tokens, n_predict,
        )  # fmt: skip
        data["stop_token_ids"] = list(fim.stop_ids)  # (llama.cpp's end tokens of a fill)
        return await run_native(request, data)

    async def run_native(request: Request, data: dict) -> Response:
        """A checked /completion body run as the /v1/completions request it describes."""
        native = native_fields(data)
        if isinstance(model_name := data.get("model"), str):  # (another type: pydantic's 400)
            ctx.check_model(model_name)
        body, prompts, opts = await asyncio.to_thread(
            completion_request, data, native, tokenizer, ctx.max_total_tokens, prefix_cache,
            defaults,
        )  # fmt: skip
        check_choices(body, len(prompts))
        # llama.cpp's n_predict left out: -1, what the context leaves (the model's own limit)
        prepared = await sampling_requests(ctx, body, prompts, ctx.defaults.max_tokens)
        group = GenerationGroup(ctx.client, P.new_id("cmpl"), prepared.requests,
                                report_progress=prepared.opts.progress)  # fmt: skip
        param = prepared.opts.constraint_param  # what a failure of the request's doing names
        if body.stream:
            return StreamingResponse(_stream(group, model, opts, param),
                                     media_type="text/event-stream", headers=SSE_HEADERS)  # fmt: skip
        choices = await run_to_end(request, group, param)
        if choices is None:
            return Response(status_code=499)  # the client is gone: nobody reads this

        def write() -> str:
            prompt_text = PromptTexts()
            results = []
            for i, c in choices:
                state = group.state_of(i)
                results.append(result(state, c, i, model, opts, prompt_text(state), stream=False))
            return dumps(results[0] if len(results) == 1 else results)

        return Response(await asyncio.to_thread(write), media_type="application/json")

    @router.post("/embedding")
    @router.post("/embeddings")
    async def embedding(request: Request) -> Response:
        """llama.cpp's: `[{index, embedding: [vector]}]`, a vector per prompt (its pooled
        form: one vector, not one per token)."""
        data = await ctx.checked_body(request, F.LLAMACPP_EMBEDDING)
        body = validated(EmbeddingFields, data)
        ctx.check_model(body.model)
        if not -1 <= body.embd_normalize <= MAX_NORM:
            raise APIError(400, f"embd_normalize is -1 (none), 0 (int16's range), or a p-norm "
                                f"up to {MAX_NORM}, got {body.embd_normalize}",
                           param="embd_normalize")  # fmt: skip
        field = "content" if body.content is not None else "input"
        given = body.content if body.content is not None else body.input
        if given is None or (body.content is not None and body.input is not None):
            raise APIError(400, "give content (or its alias input), once", param=field)
        count = len(prompt_list(given, field))
        if count > MAX_INPUTS:
            raise APIError(400, f"{count} prompts: at most {MAX_INPUTS} in one request",
                           param=field)  # fmt: skip
        prompts = await asyncio.to_thread(native_prompts, tokenizer, given, field)
        vectors = await pooled(ctx, request, P.new_id("embd"), prompts,
                               PoolingParams(normalize=False), field)  # fmt: skip
        if vectors is None:
            return Response(status_code=499)  # the client is gone: nobody reads this

        def write() -> str:
            return dumps([{"index": i, "embedding": [normalized(v, body.embd_normalize).tolist()]}
                          for i, v in enumerate(vectors)])  # fmt: skip

        return Response(await asyncio.to_thread(write), media_type="application/json")

    @router.get("/props")
    async def props() -> dict:
        engine = ctx.client.engine
        settings = generation_settings(defaults.params(), False)
        # (llama.cpp's default chain, which /completion runs: the temperature last)
        settings["samplers"] = sampler_chain.ran(temperature_last=True, infill=False)
        # a request that sets no limit runs to what the context leaves (llama.cpp's -1)
        settings["n_predict"] = settings["max_tokens"] = defaults.max_tokens or -1
        hf = tokenizer.hf
        return {
            # n_ctx: a prompt and its output, at most (the KV cache may hold less than the
            # model's context)
            "default_generation_settings": {"params": settings, "n_ctx": ctx.max_total_tokens},
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


async def _stream(
    group: GenerationGroup, model: str, opts: NativeOptions, param: str | None
) -> AsyncIterator[str]:
    """llama.cpp's stream: a chunk per new text (its tokens, probabilities), a `stop: true`
    result as each choice finishes; an error as an `{"error": ...}` event, then the end
    (`param`: the request's constraint field, which a failure of its own doing names)."""
    sent: dict[int, int] = {}  # tokens of each choice sent so far
    prompt_text = PromptTexts()
    progress_sent: dict[str, PromptProgress] = {}
    async with group:
        try:
            async for index, choice, text in group.events():
                state = group.state_of(index)
                progress = state.prompt_progress  # (with `return_progress`: llama.cpp's form)
                if progress is not None and progress_sent.get(state.request_id) is not progress:
                    progress_sent[state.request_id] = progress
                    partial = chunk(state, choice, index, "", [], [], opts)
                    yield sse_data({**partial, "prompt_progress": progress_json(progress)})
                ids = choice.token_ids[sent.get(index, 0) :]
                sent[index] = len(choice.token_ids)
                if (text or ids) and not opts.prompt_only:
                    positions = (choice.logprobs or [])[len(choice.token_ids) - len(ids) :]
                    yield sse_data(chunk(state, choice, index, text, ids, positions, opts))
                if choice.finished:  # (the prompt's text: decoded once, off the loop)
                    text_of = await asyncio.to_thread(prompt_text, state)
                    yield sse_data(result(state, choice, index, model, opts, text_of, stream=True))
        except RequestFailed as e:
            yield sse_data(failed_request_error(e, param).body())
        except Exception as e:  # a bug while processing this request: fail it alone
            logger.exception("error while streaming a /completion")
            yield sse_data(internal_error(e).body())
