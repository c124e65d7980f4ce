"""The FastAPI app: `create_app(client, server_config)`.

Endpoints: GET/HEAD /health (and /ping, /v1/health), GET /version, GET /v1/models (and /models),
GET /v1/models/{id}, GET /metrics, POST /generate (the seeds' API), POST /v1/completions,
POST /v1/chat/completions, POST /v1/responses (run as a chat request: responses_input.py) and
POST /v1/responses/input_tokens (its prompt's count) with GET and DELETE /v1/responses/{id},
POST /v1/responses/{id}/cancel and GET /v1/responses/{id}/input_items (its stored and
background ones: responses_api.py), the Conversations API under /v1/conversations
(conversations.py), POST /v1/embeddings (embeddings.py), vLLM's POST /score and /rerank
(scores.py), POST /tokenize, /detokenize and llama.cpp's /apply-template (tokenization.py),
llama.cpp's POST /completion, /infill, /embedding and GET /props (llamacpp.py), and the pages
of web.py (the chat page at /, /docs, /redoc). Each route module reads the one
`ServingContext` (context.py): the client, the config, the checks every endpoint makes.

`--api-key` protects /v1/*, /generate, /tokenize, /detokenize, /score, /rerank and llama.cpp's
endpoints (Bearer token; its /models too); /health (/v1/health), /version and /metrics stay
open for probes and scrapers, and the pages for browsers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from roseinfer import __version__
from roseinfer.engine.client import EngineClient
from roseinfer.server import protocol as P
from roseinfer.server.auth import api_key_error
from roseinfer.server.completions import add_completion_routes
from roseinfer.server.config import ServerConfig
from roseinfer.server.context import ServingContext
from roseinfer.server.conversations import ConversationStore, add_conversation_routes
from roseinfer.server.embeddings import add_embedding_routes
from roseinfer.server.errors import APIError, install_error_handlers
from roseinfer.server.llamacpp import add_llamacpp_routes
from roseinfer.server.metrics import ServerMetrics
from roseinfer.server.middleware import BodySizeLimitMiddleware, RequestIdMiddleware
from roseinfer.server.openapi import install_openapi, request_bodies
from roseinfer.server.responses_api import StoredResponses, query_params
from roseinfer.server.responses_store import ResponseStore
from roseinfer.server.scores import add_score_routes
from roseinfer.server.tokenization import add_tokenization_routes
from roseinfer.server.web import add_pages


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
    ctx = ServingContext(client, cfg)
    metrics = ServerMetrics(model_name=ctx.model_name)  # (vLLM's names too, labelled by it)
    if client.observer is None:
        client.observer = metrics
    # /v1/responses kept for later reads, and the conversations they continue (bounded apart)
    # (a response reads no more of a conversation than a prompt could hold: the context times
    # the longest token's characters)
    longest_token = max(map(len, ctx.tokenizer.hf.get_vocab()), default=1)
    conversations = ConversationStore(cfg.conversations_store_size,
                                      cfg.conversations_store_mib << 20,
                                      ctx.max_model_len * longest_token)  # fmt: skip
    stored = StoredResponses(
        ResponseStore(cfg.responses_store_size, cfg.responses_store_mib << 20), conversations
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        try:
            await stored.shutdown()  # background responses cancelled while the engine runs
        finally:
            client.shutdown()

    # docs_url/redoc_url None: web.py serves both pages without FastAPI's CDN.
    app = FastAPI(title="roseinfer", version=__version__, lifespan=lifespan, docs_url=None,
                  redoc_url=None)  # fmt: skip
    app.state.client, app.state.metrics, app.state.server_config = client, metrics, cfg
    app.state.responses = stored
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

    async def check_post_query(request: Request) -> None:
        """A POST's query parameters: none is read (the body says it all), so each is a 400
        naming it (`query_params`: Azure OpenAI's `api-version` a no-op)."""
        if request.method == "POST":
            query_params(request, ())

    api = APIRouter(dependencies=[Depends(check_api_key), Depends(check_post_query)])

    # ---- endpoints -----------------------------------------------------------------------
    @app.head("/health", include_in_schema=False)  # probes that only read the status
    @app.get("/health")
    @app.head("/ping", include_in_schema=False)
    @app.get("/ping")  # vLLM's name of the same (SageMaker's health check)
    @app.head("/v1/health", include_in_schema=False)
    @app.get("/v1/health", include_in_schema=False)  # llama.cpp's second name of it
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
    @api.get("/models", include_in_schema=False)  # llama.cpp's second name of it
    async def list_models() -> dict:
        created = P.now()
        cards = [P.model_card(name, created, ctx.max_model_len) for name in ctx.model_names]
        return {"object": "list", "data": cards}

    @api.get("/v1/models/{model_id:path}")  # :path: model names may hold slashes
    async def retrieve_model(model_id: str) -> dict:
        ctx.check_model(model_id)
        return P.model_card(model_id, P.now(), ctx.max_model_len)

    add_completion_routes(api, ctx, stored)
    add_conversation_routes(api, conversations)
    add_tokenization_routes(api, ctx.tokenizer, ctx.max_model_len, ctx.check_model)
    add_embedding_routes(api, ctx)
    add_score_routes(api, ctx)
    add_llamacpp_routes(api, ctx)
    app.include_router(api)
    add_pages(app)
    install_openapi(app, request_bodies(ctx.model_name, ctx.tokenizer),
                    [r.path for r in api.routes if isinstance(r, APIRoute)]
                    if cfg.api_keys else [])  # fmt: skip
    return app
