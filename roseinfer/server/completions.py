"""The generating endpoints: POST /v1/completions, /v1/chat/completions, /v1/responses (run as
the chat request it describes: responses_input.py; its stored and background ones:
responses_api.py; its prompt counted: /v1/responses/input_tokens) and /generate (the seeds'
API). Handlers only validate, tokenize, submit to the `EngineClient`
and read results; the engine thread does the stepping."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from roseinfer.chat import ChatMessage
from roseinfer.compat import seed_params
from roseinfer.fim import FimTokens, NoFimTokens, infill_prompt
from roseinfer.llm import encode_prompt
from roseinfer.output.processor import ChoiceState
from roseinfer.output.reasoning import (
    THINK_CLOSE,
    THINK_OPEN,
    ReasoningParserName,
    prompt_end,
    thinking_budget,
    thinking_first,
)
from roseinfer.outputs import RequestFailed
from roseinfer.reasoning_params import ThinkingBudget
from roseinfer.sampling_params import SamplingParams
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.body_check import FieldError
from roseinfer.server.chat_prompt import num_prompts, prompt_lists, request_prompt_ids
from roseinfer.server.context import ServingContext
from roseinfer.server.errors import APIError, failed_request_error, internal_error, validated
from roseinfer.server.generation import SSE_HEADERS, GenerationGroup, text_stream
from roseinfer.server.json_text import dumps
from roseinfer.server.params import (
    ResponseOptions,
    check_choices,
    client_names,
    max_tokens_field,
    response_options,
    sampling_error,
)
from roseinfer.server.request_io import ClientDisconnected, given_request_id, until_disconnected
from roseinfer.server.responses_api import StoredResponses
from roseinfer.server.responses_input import ResponsesRequest, conversation_id, responses_request
from roseinfer.server.responses_output import ResponseHead, response_events, response_object
from roseinfer.server.responses_truncation import fit_conversation
from roseinfer.server.serving import response_body, sse_stream
from roseinfer.server.structured import (
    Constraint,
    compile_constraint,
    structured_outputs,
    tool_use,
)
from roseinfer.structured.tools import ToolUse

logger = logging.getLogger(__name__)

# what OpenAI's input_tokens count reads of a Responses body (the rest shape the output)
INPUT_TOKENS_FIELDS = frozenset({"input", "instructions", "model", "parallel_tool_calls",
                                 "previous_response_id", "text", "tool_choice", "tools",
                                 "truncation", "conversation", "reasoning"})  # fmt: skip


@dataclass(frozen=True)
class SamplingRequests:
    """A request body's engine requests (a prompt and its params each), as checked."""

    requests: list[tuple[list[int], SamplingParams]]
    opts: ResponseOptions  # how the response writes them
    constraint: Constraint  # its structured output (a tools' grammar too)
    reasoning: ReasoningParserName | None = None  # how its thinking is read apart (chat)


async def sampling_requests(
    ctx: ServingContext,
    body: P.SamplingRequest,
    prompts: list[list[int]],
    default_max: int | None,
    tools: ToolUse | None = None,
    read_thinking: bool = True,
) -> SamplingRequests:
    """The engine requests of a completions or chat body over its tokenized `prompts`, checked
    as the engine will (a 400 naming the request's own field, a 503 past the queue's limit);
    `default_max`: the output limit where the body gives none (None: what the context
    leaves); `read_thinking`: False where a chat answer's thinking stays in its text (a
    Response with logprobs). With a reasoning parser, a grammar that shapes the answer from
    its start waits for the thinking to end (`StructuredOutputs.thinking_first`)."""
    opts = response_options(body)
    prompts = [ctx.builder.truncate(body, ids) for ids in prompts]
    constraint = structured_outputs(body, tools)
    reasoning = None
    if isinstance(body, P.ChatCompletionRequest):
        reasoning = reasoning_of(ctx.cfg.reasoning_parser, body) if read_thinking else None
        show = reasoning is not None and body.include_reasoning
        opts = dataclasses.replace(opts, show_reasoning=show)
    # (the tools' "auto" grammar too: a `<tool_call>` written while thinking opens no call)
    if reasoning is not None and constraint.spec is not None:
        if (first := thinking_first(reasoning, prompt_end(ctx.tokenizer, prompts[0]))) is not None:
            after = dataclasses.replace(constraint.spec, thinking_first=first)
            constraint = dataclasses.replace(constraint, spec=after)
    thinking = None
    if isinstance(body, P.ChatCompletionRequest):
        thinking = checked_thinking_budget(ctx, body, prompts[0])
    spec = constraint.spec
    if spec is not None:
        await compile_constraint(constraint, ctx.client.engine.grammars.check)
        opts = dataclasses.replace(opts, constraint_param=constraint.param)
    names = client_names(body, opts.chat, constraint.param)
    requests = [
        (ids, ctx.builder.params(body, len(ids), default_max, opts, spec, names, thinking))
        for ids in prompts
    ]
    params = requests[0][1] if requests else None
    if params is not None and params.bad_words:  # tokenized here, not on the engine loop
        await asyncio.to_thread(ctx.client.engine.bad_words.token_ids, params.bad_words)
    if params is not None and params.dry is not None and params.uses_dry:  # (the vocabulary read)
        await asyncio.to_thread(ctx.client.engine.dry_breakers.of, params.dry.sequence_breakers)
    ctx.submit_checks(requests, names)
    return SamplingRequests(requests, opts, constraint, reasoning)


def checked_thinking_budget(
    ctx: ServingContext, body: P.ChatCompletionRequest, prompt_ids: list[int]
) -> ThinkingBudget | None:
    """vLLM's `thinking_token_budget` (-1: none) or llama.cpp's `reasoning_budget_tokens` (< 0:
    none), with llama.cpp's message, tags and arming: the tags are the server's
    `--reasoning-parser`'s (vLLM's needs its reasoning config) unless both are given."""
    vllm, llama = body.thinking_token_budget, body.reasoning_budget_tokens
    if vllm is not None and vllm < -1:
        raise APIError(400, f"thinking_token_budget must be >= 0 (or -1: none), got {vllm}",
                       param="thinking_token_budget")  # fmt: skip
    given = [(name, n) for name, n in (("thinking_token_budget", vllm),
             ("reasoning_budget_tokens", llama)) if n is not None and n >= 0]  # fmt: skip
    if not given:
        return None
    if len(given) == 2 and vllm != llama:
        raise APIError(400, f"thinking_token_budget ({vllm}) and reasoning_budget_tokens "
                       f"({llama}) are one budget: give one", param="reasoning_budget_tokens")  # fmt: skip
    name, n = given[0]
    start, end = body.reasoning_budget_start_tag, body.reasoning_budget_end_tag
    for tag, value in (("reasoning_budget_start_tag", start), ("reasoning_budget_end_tag", end)):
        if value is not None and not value.strip():
            raise APIError(400, f"{tag} must be a tag's text", param=tag)
    if ctx.cfg.reasoning_parser is None and not (start and end):
        raise APIError(400, f"{name}: this server reads no thinking (start it with "
                       "--reasoning-parser, or give reasoning_budget_start_tag and "
                       "reasoning_budget_end_tag)", param=name)  # fmt: skip
    tags = (start or THINK_OPEN, end or THINK_CLOSE)
    return thinking_budget(ctx.tokenizer, n, prompt_ids, tags, body.reasoning_budget_message,
                           body.reasoning_budget_arm_immediately)  # fmt: skip


def reasoning_of(
    server_parser: ReasoningParserName | None, body: P.ChatCompletionRequest
) -> ReasoningParserName | None:
    """The format a chat answer's thinking is read apart in (None: none, the thinking stays in
    `content`): the server's `--reasoning-parser`, unless the request says `reasoning_format:
    "none"`. Asking for what no parser gives is a 400."""
    fmt = body.reasoning_format
    if fmt not in (None, "none", "auto", "deepseek"):
        raise APIError(400, f'reasoning_format must be "none", "auto" or "deepseek", got {fmt!r}',
                       param="reasoning_format")  # fmt: skip
    if server_parser is None:
        # "auto" reads apart what the model's format has (llama.cpp's, for a template that
        # thinks): without a parser, nothing; "deepseek" names a format: it cannot act
        if fmt not in (None, "none", "auto"):
            raise APIError(400, f"reasoning_format {fmt!r}: this server reads no reasoning apart "
                           '(start it with --reasoning-parser), only "none" or "auto"',
                           param="reasoning_format")  # fmt: skip
        if not body.include_reasoning:
            raise APIError(400, "include_reasoning: false: this server reads no reasoning apart "
                           "(start it with --reasoning-parser)", param="include_reasoning")  # fmt: skip
        return None
    return None if fmt == "none" else server_parser


def add_completion_routes(api: APIRouter, ctx: ServingContext, stored: StoredResponses) -> None:
    """Add the four endpoints to `api` (the app's API-key-protected router); `stored`: the
    responses /v1/responses keeps for later reads."""
    client, tokenizer, defaults = ctx.client, ctx.tokenizer, ctx.defaults
    model_name = ctx.model_name

    async def run_openai(
        request: Request,
        body: P.SamplingRequest,
        prompts: list[list[int]],
        tools: ToolUse | None = None,
        responses: ResponsesRequest | None = None,
    ) -> Response:
        """`responses`: a /v1/responses request, run as its chat request `body` (its answer
        an OpenAI Response)."""
        chat = isinstance(body, P.ChatCompletionRequest)
        # OpenAI's: what the context leaves (chat), 16 (completions); the model's own below
        default_max = defaults.max_tokens if chat else min(16, defaults.max_tokens or 16)
        # (a Response's output_text logprobs are every token's: it keeps its thinking in it)
        read_thinking = responses is None or not responses.echo.logprobs
        prepared = await sampling_requests(ctx, body, prompts, default_max, tools, read_thinking)
        opts, requests, constraint = prepared.opts, prepared.requests, prepared.constraint
        prompts = [ids for ids, _ in requests]
        prefix = "resp" if responses else "chatcmpl" if chat else "cmpl"
        sep = "_" if responses else "-"  # OpenAI's ids: resp_..., chatcmpl-..., cmpl-...
        # The engine's ids stay ours (unique); a client's request_id names the response only.
        internal_id, created = P.new_id(prefix, sep), P.now()
        given_id = given_request_id(request, body.request_id)
        rid = internal_id if given_id is None else f"{prefix}{sep}{given_id}"
        # Each prompt counted once, whatever n (OpenAI's and vLLM's usage): its n choices share it.
        prompt_tokens = sum(len(ids) for ids in prompts)
        if body.stream_interval is not None and body.stream_interval < 1:
            raise APIError(400, f"stream_interval must be >= 1, got {body.stream_interval}",
                           param="stream_interval")  # fmt: skip
        group = GenerationGroup(client, internal_id, requests, constraint.tools,
                                body.stream_interval, prepared.reasoning, opts.progress)  # fmt: skip
        if responses is not None:
            # a taken id that came in X-Request-Id (gateways keep it across retries) gives way
            # to ours; the body's request_id is the client's own choice: a 400
            response_id = stored.claim(responses, rid,
                                       internal_id if body.request_id is None else None)  # fmt: skip
            head = ResponseHead(
                response_id, created, model_name, responses, defaults, opts.show_reasoning
            )
            if responses.echo.background:
                return stored.start_background(head, group, prompt_tokens, opts.constraint_param,
                                               bool(body.stream))  # fmt: skip
            keep = functools.partial(stored.finish, responses)
            if body.stream:
                events = response_events(head, group, prompt_tokens, opts.constraint_param, keep)
                return StreamingResponse(stored.released(events, head.id, responses),
                                         media_type="text/event-stream", headers=SSE_HEADERS)  # fmt: skip
            try:
                if await run_to_end(request, group, opts.constraint_param) is None:
                    return Response(status_code=499)
                answer = response_object(head, group, prompt_tokens)
                answer_json = dumps(answer)
                keep(answer, answer_json)
                return Response(answer_json, media_type="application/json")
            finally:
                stored.release(head.id, responses)  # (kept or not: the id is free again)
        if body.stream:
            stream = sse_stream(
                group, rid, created, model_name, opts, prompt_tokens, body.include_usage
            )
            return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)
        choices = await run_to_end(request, group, opts.constraint_param)
        if choices is None:
            return Response(status_code=499)  # the client is gone: nobody reads this
        content = await asyncio.to_thread(
            response_body, group, choices, opts, rid, created, model_name, prompt_tokens
        )
        return Response(content, media_type="application/json")

    @api.post("/v1/completions")
    async def completions(request: Request) -> Response:
        body = await ctx.parse(request, P.CompletionRequest, F.COMPLETIONS)
        ctx.check_model(body.model)
        check_choices(body, num_prompts(body.prompt))
        if body.suffix:  # a fill in the middle: the prompt and the suffix as the model's
            fim, texts = checked_fim(ctx, body)
            prompts = await asyncio.to_thread(fim_prompts, ctx, body, fim, texts)
            stops = [*(body.stop_token_ids or ()), *fim.stop_ids]  # (llama.cpp's end tokens)
            body = body.model_copy(update={"stop_token_ids": stops})
            return await run_openai(request, body, prompts)
        # Tokenized on a worker thread (the tokenizer lets go of the GIL): a 4 MB prompt took
        # 1.6 s, which on the event loop held every other request's answer.
        prompts = await asyncio.to_thread(prompt_lists, tokenizer, body.prompt, "prompt",
                                          body.add_special_tokens)  # fmt: skip
        return await run_openai(request, body, prompts)

    @api.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        body = await ctx.parse(request, P.ChatCompletionRequest, F.CHAT)
        ctx.check_model(body.model)
        tools, use = tool_use(body)
        ids = await asyncio.to_thread(request_prompt_ids, tokenizer, body.messages, tools,
                                      body.add_generation_prompt, body.continue_final_message,
                                      body.chat_template_kwargs, body.add_special_tokens,
                                      body.documents, body.reasoning_effort)  # fmt: skip
        return await run_openai(request, body, [ids], use)

    async def responses_prompt(
        data: dict,
    ) -> tuple[ResponsesRequest, P.ChatCompletionRequest, list[int], ToolUse | None]:
        """A checked Responses body as its chat request: (what it asked, the chat body, its
        prompt's token ids, its tools' use); errors name the Responses request's fields."""
        try:
            keeps = stored.store.capacity > 0
            run = responses_request(data, stored.conversation if keeps else None,
                                    stored.conversation_items
                                    if stored.keeps_conversations else None)  # fmt: skip
        except FieldError as e:
            raise e.api_error() from None
        try:
            body = validated(P.ChatCompletionRequest, run.chat)
            ctx.check_model(body.model)
            tools, use = tool_use(body)

            def render(messages: list[ChatMessage]) -> list[int]:
                return request_prompt_ids(tokenizer, messages, tools, body.add_generation_prompt,
                                          body.continue_final_message, body.chat_template_kwargs)  # fmt: skip

            if run.echo.truncation == "auto":  # the oldest messages go until the output fits
                # (left out: the model's own limit, at most half the context, or a quarter)
                total = ctx.max_total_tokens
                default_room = min(defaults.max_tokens or total // 4, total // 2)
                room = body.max_completion_tokens or default_room
                limit = total - max(room, body.min_tokens + 1)
                messages, ids = await asyncio.to_thread(fit_conversation, body.messages, render,
                                                        limit)  # fmt: skip
                body = body.model_copy(update={"messages": messages})
            else:
                ids = await asyncio.to_thread(render, body.messages)
            return run, body, ids, use
        except APIError as e:
            raise run.renamed(e) from None

    @api.post("/v1/responses")
    async def responses(request: Request) -> Response:
        """OpenAI's Responses API, run as the chat request it describes (responses_input.py).
        The conversation it continues is held from before it is read until the response ends
        (`StoredResponses.hold`)."""
        data = await ctx.checked_body(request, F.RESPONSES)
        try:
            conversation = conversation_id(data.get("conversation"),
                                           data.get("previous_response_id"))  # fmt: skip
        except FieldError as e:
            raise e.api_error() from None
        owner: object = request
        if conversation is not None and stored.store.capacity:
            stored.hold(conversation, owner)
        try:
            run, body, ids, use = await responses_prompt(data)
            if conversation is not None:
                stored.hand_over(conversation, request, run)
                owner = run
            try:
                return await run_openai(request, body, [ids], use, run)
            except APIError as e:
                raise run.renamed(e) from None
        except BaseException:  # (it never ran: nothing else frees the conversation)
            if conversation is not None:
                stored.free(conversation, owner)
            raise

    @api.post("/v1/responses/input_tokens")
    async def responses_input_tokens(request: Request) -> dict:
        """OpenAI's count of a Responses request's input tokens (`client.responses.input_tokens
        .count`): the prompt it would run, as `/v1/responses` renders it."""
        data = await ctx.checked_body(request, F.RESPONSES)
        for name in data:
            if name not in INPUT_TOKENS_FIELDS:
                raise APIError(400, f"{name} is not a field of /v1/responses/input_tokens (it "
                                    "counts the input only)", param=name,
                               code="unknown_field")  # fmt: skip
        _, _, ids, _ = await responses_prompt(data)
        return {"object": "response.input_tokens", "input_tokens": len(ids)}

    stored.add_routes(api)

    @api.post("/generate")
    async def generate(request: Request) -> Response:
        body = await ctx.parse(request, P.GenerateRequest, F.GENERATE)
        try:
            ids = await asyncio.to_thread(encode_prompt, tokenizer, body.prompt)
        except ValueError as e:
            raise APIError(400, str(e), param="prompt") from None
        try:
            params = dataclasses.replace(
                seed_params(body.max_new_tokens, body.temperature, body.top_k, body.top_p,
                            body.stop_on_eos, body.do_sample, body.seed, warn_unused=False),
                stop=(body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ()),
            )  # fmt: skip
        except ValueError as e:
            raise sampling_error(e, {}) from None
        ctx.submit_checks([(ids, params)], {"max_tokens": "max_new_tokens"})
        group = GenerationGroup(client, P.new_id("gen"), [(ids, params)])
        if body.stream:
            return StreamingResponse(text_stream(group), media_type="text/plain; charset=utf-8")
        choices = await run_to_end(request, group)
        if choices is None:
            return Response(status_code=499)
        ((_, choice),) = choices
        use = P.usage(len(ids), len(choice.token_ids))
        return JSONResponse(
            {"text": choice.text, "finish_reason": choice.finish_reason, "usage": use}
        )


def checked_fim(ctx: ServingContext, body: P.CompletionRequest) -> tuple[FimTokens, list[str]]:
    """The model's FIM tokens and the text prompts of a body with a `suffix` (a 400 where it
    cannot act)."""
    if body.echo:
        raise APIError(400, "echo is not supported beside suffix (the prompt a fill runs is "
                            "the model's own form of the prompt and the suffix)", param="echo")  # fmt: skip
    prompts = [body.prompt] if isinstance(body.prompt, str) else body.prompt
    if not prompts:
        raise APIError(400, "prompt must not be empty", param="prompt")
    if not all(isinstance(p, str) for p in prompts):
        raise APIError(400, "suffix needs text prompts (a fill tokenizes the prompt and the "
                            "suffix its own way)", param="prompt")  # fmt: skip
    if body.truncate_prompt_tokens is not None:  # (it would cut the fill's own tokens)
        raise APIError(400, "truncate_prompt_tokens is not supported beside suffix (a fill "
                            "keeps the prefix's last tokens and the suffix's first itself)",
                       param="truncate_prompt_tokens")  # fmt: skip
    try:
        return ctx.fim_tokens(), [str(p) for p in prompts]
    except NoFimTokens as e:
        raise APIError(400, f"suffix: {e}", param="suffix") from None


def fim_prompts(ctx: ServingContext, body: P.CompletionRequest, fim: FimTokens,
                prompts: list[str]) -> list[list[int]]:  # fmt: skip
    """Each text prompt filled in before `body.suffix` (fim.py)."""
    assert body.suffix is not None
    limit = max_tokens_field(body)[1] or 0  # (max_tokens, or its other names)
    return [infill_prompt(ctx.tokenizer, fim, p, body.suffix, [], "", ctx.max_total_tokens,
                          limit) for p in prompts]  # fmt: skip


async def run_to_end(
    request: Request, group: GenerationGroup, param: str | None = None
) -> list[tuple[int, ChoiceState]] | None:
    """Generate every choice of a non-streamed request; None if the client disconnects first
    (then, as on any error, the group's exit aborts what is still running). `param`: what a
    failure of the request's own doing names (`failed_request_error`)."""
    async with group:
        try:
            return await until_disconnected(request, group.collect())
        except ClientDisconnected:
            return None
        except RequestFailed as e:
            raise failed_request_error(e, param) from None
        except Exception as e:  # a bug while processing this request: it fails alone
            logger.exception("error while processing a request")
            raise internal_error(e) from None
