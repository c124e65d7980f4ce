"""The FastAPI app: `create_app(client, server_config)`.

Endpoints: GET/HEAD /health (and /ping), GET /version, GET /v1/models, GET /v1/models/{id},
GET /metrics, POST /generate (the seeds' API), POST /v1/completions, POST /v1/chat/completions,
POST /v1/responses (run as a chat request: responses_input.py) with GET and DELETE
/v1/responses/{id} and GET /v1/responses/{id}/input_items (its stored ones: responses_api.py),
POST /tokenize and POST /detokenize (tokenization.py), and the pages of web.py (the chat page
at /, /docs, /redoc). Handlers only validate, tokenize, submit to the `EngineClient` and read
results; the engine thread does the stepping.

`--api-key` protects /v1/*, /generate, /tokenize and /detokenize (Bearer token); /health,
/version and /metrics stay open for probes and scrapers, and the pages for browsers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute

from roseinfer import __version__
from roseinfer.chat import ChatMessage
from roseinfer.compat import seed_params
from roseinfer.engine.client import EngineClient
from roseinfer.engine.requests import InvalidRequestError
from roseinfer.llm import encode_prompt
from roseinfer.output.processor import ChoiceState
from roseinfer.sampling_params import SamplingParams
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.auth import api_key_error
from roseinfer.server.body_check import FieldError, check_body
from roseinfer.server.chat_prompt import num_prompts, prompt_lists, request_prompt_ids
from roseinfer.server.config import ServerConfig
from roseinfer.server.embeddings import add_embedding_routes
from roseinfer.server.errors import (
    APIError,
    ModelT,
    failed_request_error,
    install_error_handlers,
    internal_error,
    validated,
)
from roseinfer.server.jsonbody import read_request_json
from roseinfer.server.metrics import ServerMetrics
from roseinfer.server.middleware import BodySizeLimitMiddleware, RequestIdMiddleware
from roseinfer.server.openapi import install_openapi, request_bodies
from roseinfer.server.params import (
    ParamsBuilder,
    check_choices,
    client_names,
    engine_error,
    response_options,
    sampling_error,
)
from roseinfer.server.responses_api import StoredResponses
from roseinfer.server.responses_input import (
    ResponsesRequest,
    fit_conversation,
    responses_request,
)
from roseinfer.server.responses_output import ResponseHead, response_events, response_object
from roseinfer.server.responses_store import ResponseStore
from roseinfer.server.serving import (
    ClientDisconnected,
    GenerationGroup,
    RequestFailed,
    dumps,
    given_request_id,
    response_body,
    sse_stream,
    text_stream,
    until_disconnected,
)
from roseinfer.server.structured import compile_constraint, structured_outputs, tool_use
from roseinfer.server.tokenization import add_tokenization_routes
from roseinfer.server.web import add_pages
from roseinfer.structured.tools import ToolUse

logger = logging.getLogger(__name__)


SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def create_app(client: EngineClient, server_config: ServerConfig | None = None) -> FastAPI:
    """The app over a running (or about to run) `EngineClient`; it records the server metrics
    as the client's observer unless the client has one, and sets the client's `stream_interval`
    to the config's (a client built with another value than the default 1 is refused: say it in
    `ServerConfig` only)."""
    cfg = server_config or ServerConfig()
    if client.stream_interval not in (1, cfg.stream_interval):
        raise ValueError(
            f"the EngineClient streams every {client.stream_interval} tokens but ServerConfig."
            f"stream_interval is {cfg.stream_interval}: set it in ServerConfig only"
        )
    client.stream_interval = cfg.stream_interval
    core = client.engine
    model_names = cfg.served_model_names or (core.model_name,)
    model_name = model_names[0]
    metrics = ServerMetrics(model_name=model_name)  # (vLLM's names too, labelled by it)
    if client.observer is None:
        client.observer = metrics
    tokenizer = core.tokenizer
    defaults = core.sampling_defaults  # of a field a request leaves out
    max_total_tokens = core.max_total_tokens  # a prompt and its output, at most
    builder = ParamsBuilder(max_total_tokens, core.max_model_len, defaults)
    # /v1/responses kept for later reads
    stored = StoredResponses(ResponseStore(cfg.responses_store_size, cfg.responses_store_mib << 20))
    # what the field table's checks read beside the request (repeat_last_n: the penalty)
    left_out = {"repetition_penalty": defaults.repetition_penalty}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        client.shutdown()

    # docs_url/redoc_url None: web.py serves both pages without FastAPI's CDN.
    app = FastAPI(title="roseinfer", version=__version__, lifespan=lifespan, docs_url=None,
                  redoc_url=None)  # fmt: skip
    app.state.client, app.state.metrics, app.state.server_config = client, metrics, cfg
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=cfg.max_request_bytes)
    if cfg.allowed_origins:  # off by default: a page from another origin cannot call the API
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cfg.allowed_origins),
            allow_methods=["*"],
            allow_headers=["*"],
            # what a page may read of a response beside its body: when to retry a 503, its id
            expose_headers=["Retry-After", "X-Request-Id"],
        )
    # outermost of ours: a 413 and a CORS preflight carry the id too (not a 500: outside all)
    app.add_middleware(RequestIdMiddleware)

    def unknown_v1_path(request: Request) -> APIError | None:
        """An unknown path under /v1 asks for the key first, as the API's routes do."""
        in_api = request.url.path.startswith("/v1/")
        return api_key_error(request, cfg.api_keys) if in_api else None

    install_error_handlers(app, unknown_v1_path)

    async def check_api_key(request: Request) -> None:
        if (denied := api_key_error(request, cfg.api_keys)) is not None:
            raise denied

    api = APIRouter(dependencies=[Depends(check_api_key)])

    # ---- helpers -------------------------------------------------------------------------
    async def checked_body(request: Request, endpoint: str) -> dict:
        """The body's honoured fields (the field table: unknown or refused -> 400)."""
        data = await read_request_json(request)
        try:
            return check_body(data, endpoint, left_out)
        except FieldError as e:
            raise e.api_error() from None

    async def parse(request: Request, model: type[ModelT], endpoint: str) -> ModelT:
        return validated(model, await checked_body(request, endpoint))

    def check_model(name: str | None) -> None:
        if name is not None and name not in model_names:
            raise APIError(404, f"The model `{name}` does not exist (this server serves "
                                f"{', '.join(f'`{n}`' for n in model_names)}).",
                           param="model", code="model_not_found")  # fmt: skip

    def check_capacity(num_new: int = 1) -> None:
        """503 where the `num_new` engine requests this one adds (prompts x n, inputs) would
        take the waiting past --max-waiting-requests; into an empty queue a request of more
        is taken whole (else it could never run)."""
        if not client.is_alive():
            raise APIError(503, "the engine is not running", code="engine_dead")
        limit = cfg.max_waiting_requests
        waiting = client.num_waiting
        if limit is not None and (waiting >= limit or (waiting and waiting + num_new > limit)):
            adds = f", and this request adds {num_new}" if num_new > 1 else ""
            raise APIError(503, f"server overloaded: {waiting} requests are waiting{adds} "
                                f"(limit {limit})", code="server_overloaded",
                           headers={"Retry-After": "1"})  # fmt: skip

    def submit_checks(
        requests: list[tuple[list[int], SamplingParams]], names: dict[str, str]
    ) -> None:
        """The engine's checks; a refusal names the field as the request sent it (`names`)."""
        for ids, params in requests:
            try:
                client.validate(ids, params)
            except InvalidRequestError as e:
                raise engine_error(e, names) from None
        check_capacity(sum(params.n for _, params in requests))

    async def run_openai(
        request: Request,
        body: P.SamplingRequest,
        prompts: list[list[int]],
        tools: ToolUse | None = None,
        responses: ResponsesRequest | None = None,
    ) -> Response:
        """`responses`: a /v1/responses request, run as its chat request `body` (its answer
        an OpenAI Response)."""
        opts = response_options(body)
        chat = opts.chat
        # OpenAI's: what the context leaves (chat), 16 (completions); the model's own below
        default_max = defaults.max_tokens if chat else min(16, defaults.max_tokens or 16)
        prompts = [builder.truncate(body, ids) for ids in prompts]
        constraint = structured_outputs(body, tools)
        spec = constraint.spec
        if spec is not None:
            await compile_constraint(constraint, core.grammars.check)
            opts = dataclasses.replace(opts, constraint_param=constraint.param)
        names = client_names(body, chat, constraint.param)
        requests = [
            (ids, builder.params(body, len(ids), default_max, opts, spec, names)) for ids in prompts
        ]
        if requests and requests[0][1].bad_words:  # tokenized here, not on the engine loop
            await asyncio.to_thread(core.bad_words.token_ids, requests[0][1].bad_words)
        submit_checks(requests, names)
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
                                body.stream_interval)  # fmt: skip
        if responses is not None:
            # a taken id that came in X-Request-Id (gateways keep it across retries) gives way
            # to ours; the body's request_id is the client's own choice: a 400
            response_id = stored.claim(responses, rid,
                                       internal_id if body.request_id is None else None)  # fmt: skip
            head = ResponseHead(response_id, created, model_name, responses, defaults)
            keep = functools.partial(stored.keep, responses)
            if body.stream:
                events = response_events(head, group, prompt_tokens, opts.constraint_param, keep)
                return StreamingResponse(stored.released(events, head.id),
                                         media_type="text/event-stream", headers=SSE_HEADERS)  # fmt: skip
            try:
                if await run_to_end(request, group, opts.constraint_param) is None:
                    return Response(status_code=499)
                answer = response_object(head, group, prompt_tokens)
                answer_json = dumps(answer)
                keep(answer, answer_json)
                return Response(answer_json, media_type="application/json")
            finally:
                stored.release(head.id)  # (kept or not: the id is free again)
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

    # ---- endpoints -----------------------------------------------------------------------
    @app.head("/health", include_in_schema=False)  # probes that only read the status
    @app.get("/health")
    @app.head("/ping", include_in_schema=False)
    @app.get("/ping")  # vLLM's name of the same (SageMaker's health check)
    async def health() -> Response:
        if not client.is_alive():
            return JSONResponse(
                {"status": "error", "detail": "engine loop is not running"}, status_code=503
            )
        return JSONResponse({"status": "ok"})

    @app.get("/metrics")
    async def get_metrics() -> Response:
        return Response(metrics.render(), media_type=metrics.content_type)

    @app.get("/version")
    async def version() -> dict:
        return {"version": __version__}

    @api.get("/v1/models")
    async def list_models() -> dict:
        created = P.now()
        cards = [P.model_card(name, created, core.max_model_len) for name in model_names]
        return {"object": "list", "data": cards}

    @api.get("/v1/models/{model_id:path}")  # :path: model names may hold slashes
    async def retrieve_model(model_id: str) -> dict:
        check_model(model_id)
        return P.model_card(model_id, P.now(), core.max_model_len)

    @api.post("/v1/completions")
    async def completions(request: Request) -> Response:
        body: P.CompletionRequest = await parse(request, P.CompletionRequest, F.COMPLETIONS)
        check_model(body.model)
        check_choices(body, num_prompts(body.prompt))
        # Tokenized on a worker thread (the tokenizer lets go of the GIL): a 4 MB prompt took
        # 1.6 s, which on the event loop held every other request's answer.
        prompts = await asyncio.to_thread(prompt_lists, tokenizer, body.prompt, "prompt")
        return await run_openai(request, body, prompts)

    @api.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        body: P.ChatCompletionRequest = await parse(request, P.ChatCompletionRequest, F.CHAT)
        check_model(body.model)
        tools, use = tool_use(body)
        ids = await asyncio.to_thread(request_prompt_ids, tokenizer, body.messages, tools,
                                      body.add_generation_prompt, body.continue_final_message,
                                      body.chat_template_kwargs)  # fmt: skip
        return await run_openai(request, body, [ids], use)

    @api.post("/v1/responses")
    async def responses(request: Request) -> Response:
        """OpenAI's Responses API, run as the chat request it describes (responses_input.py)."""
        try:
            store = stored.store
            conversation = store.conversation if store.capacity else None
            run = responses_request(await checked_body(request, F.RESPONSES), conversation)
        except FieldError as e:
            raise e.api_error() from None
        try:
            body = validated(P.ChatCompletionRequest, run.chat)
            check_model(body.model)
            tools, use = tool_use(body)

            def render(messages: list[ChatMessage]) -> list[int]:
                return request_prompt_ids(tokenizer, messages, tools, body.add_generation_prompt,
                                          body.continue_final_message, body.chat_template_kwargs)  # fmt: skip

            if run.echo.truncation == "auto":  # the oldest messages go until the output fits
                # (left out: the model's own limit, at most half the context, or a quarter)
                default_room = min(defaults.max_tokens or max_total_tokens // 4,
                                   max_total_tokens // 2)  # fmt: skip
                room = body.max_completion_tokens or default_room
                limit = max_total_tokens - max(room, body.min_tokens + 1)
                messages, ids = await asyncio.to_thread(fit_conversation, body.messages, render,
                                                        limit)  # fmt: skip
                body = body.model_copy(update={"messages": messages})
            else:
                ids = await asyncio.to_thread(render, body.messages)
            return await run_openai(request, body, [ids], use, run)
        except APIError as e:
            raise run.renamed(e) from None

    stored.add_routes(api)

    @api.post("/generate")
    async def generate(request: Request) -> Response:
        body: P.GenerateRequest = await parse(request, P.GenerateRequest, F.GENERATE)
        try:
            ids = await asyncio.to_thread(encode_prompt, tokenizer, body.prompt)
        except ValueError as e:
            raise APIError(400, str(e), param="prompt") from None
        try:
            params = dataclasses.replace(
                seed_params(body.max_new_tokens, body.temperature, body.top_k, body.top_p,
                            body.stop_on_eos, body.do_sample, body.seed),
                stop=(body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ()),
            )  # fmt: skip
        except ValueError as e:
            raise sampling_error(e, {}) from None
        submit_checks([(ids, params)], {"max_tokens": "max_new_tokens"})
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

    add_tokenization_routes(api, tokenizer, core.max_model_len, check_model)
    add_embedding_routes(api, client, model_name, checked_body, check_model, check_capacity)
    app.include_router(api)
    add_pages(app)
    install_openapi(app, request_bodies(model_name, tokenizer),
                    [r.path for r in api.routes if isinstance(r, APIRoute)]
                    if cfg.api_keys else [])  # fmt: skip
    return app


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
