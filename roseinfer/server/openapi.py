"""The OpenAPI document behind /docs and /redoc: FastAPI's, plus the request bodies and the API
key, which FastAPI cannot see here.

The routes read their bodies themselves (the field table first, then the pydantic models:
`app.parse`), so FastAPI knows no body for them, and Swagger UI's "Try it out" had no editor
for any POST. Each POST gets its models' JSON schema and a small example; with `--api-key`,
the routes it protects ask for a bearer token (Swagger UI's Authorize button).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, create_model

from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.completions import INPUT_TOKENS_FIELDS
from roseinfer.server.conversations import CreateConversation, CreateItems, UpdateConversation
from roseinfer.server.embeddings import EmbeddingRequest
from roseinfer.server.llamacpp import EmbeddingFields, InfillFields, NativeFields
from roseinfer.server.scores import RerankRequest, ScoreRequest
from roseinfer.server.tokenization import (
    ApplyTemplateRequest,
    DetokenizeRequest,
    LlamaTokenizeRequest,
    TokenizeChatRequest,
    TokenizeCompletionRequest,
)
from roseinfer.tokenizer import Tokenizer

SECURITY_SCHEME = "apiKey"
_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


@dataclass(frozen=True)
class RequestBody:
    """A POST route's body: its model(s) (more than one: any of them) and an example."""

    models: tuple[type[BaseModel], ...]
    example: dict[str, Any]


def install_openapi(
    app: FastAPI, bodies: dict[str, RequestBody], protected: Sequence[str] = ()
) -> None:
    """Make `app.openapi` (cached, as FastAPI's) add `bodies` (path -> body) and, on the paths
    in `protected`, the bearer-token security scheme."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            components = schema.setdefault("components", {})
            schemas = components.setdefault("schemas", {})
            for path, body in bodies.items():
                refs = []
                for model in body.models:
                    js = model.model_json_schema(ref_template="#/components/schemas/{model}")
                    schemas.update(js.pop("$defs", {}))
                    schemas[model.__name__] = js
                    refs.append({"$ref": f"#/components/schemas/{model.__name__}"})
                content = {"schema": refs[0] if len(refs) == 1 else {"oneOf": refs},
                           "example": body.example}  # fmt: skip
                schema["paths"][path]["post"]["requestBody"] = {
                    "required": True,
                    "content": {"application/json": content},
                }
            if protected:
                components["securitySchemes"] = {
                    SECURITY_SCHEME: {"type": "http", "scheme": "bearer"}
                }
                for path in protected:  # a route's "{id:path}" is "{id}" in the document
                    for operation in (
                        schema["paths"].get(_CONVERTOR.sub(r"{\1}", path), {}).values()
                    ):
                        operation["security"] = [{SECURITY_SCHEME: []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def responses_body_model() -> type[BaseModel]:
    """/v1/responses' body for the document: its own fields, and the chat fields it shares
    (read as chat's: `responses_input.py`). No request is validated with it."""
    own: dict[str, Any] = {
        "input": (str | list[dict[str, Any]], ...),
        "instructions": (str | None, None),
        "max_output_tokens": (int | None, None),
        "metadata": (dict[str, str] | None, None),
        "text": (dict[str, Any] | None, None),
        "tools": (list[dict[str, Any]] | None, None),
        "tool_choice": (str | dict[str, Any] | None, None),
        "include": (list[str] | None, None),
        "top_logprobs": (int | None, None),
        "store": (bool | None, None),
        "background": (bool | None, None),
        "conversation": (str | dict[str, str] | None, None),
        "user": (str | None, None),
        "prompt_cache_key": (str | None, None),
        "prompt_cache_retention": (str | None, None),
        "safety_identifier": (str | None, None),
        "truncation": (str | None, None),
        "previous_response_id": (str | None, None),
    }
    shared: dict[str, Any] = {name: (info.annotation, info) for name, info in
              P.ChatCompletionRequest.model_fields.items()
              if name in F.honoured(F.RESPONSES) and name not in own}  # fmt: skip
    return create_model("ResponsesRequest", **own, **shared)


def input_tokens_body_model() -> type[BaseModel]:
    """/v1/responses/input_tokens' body: the Responses fields that shape the input."""
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in
                              responses_body_model().model_fields.items()
                              if name in INPUT_TOKENS_FIELDS}  # fmt: skip
    return create_model("InputTokensRequest", **fields)


def llamacpp_body_model() -> type[BaseModel]:
    """llama.cpp's /completion body for the document: its own fields and those it reads as
    /v1/completions (`llamacpp.py`). No request is validated with it."""
    own = NativeFields.model_fields
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in own.items()}
    fields |= {name: (info.annotation, info) for name, info in
               P.CompletionRequest.model_fields.items()
               if name in F.honoured(F.LLAMACPP_COMPLETION) and name not in own}  # fmt: skip
    return create_model("LlamaCppCompletionRequest", **fields)


def infill_body_model() -> type[BaseModel]:
    """llama.cpp's /infill body for the document: its own fields, and /completion's but its
    prompt."""
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in
                              llamacpp_body_model().model_fields.items() if name != "prompt"}  # fmt: skip
    fields |= {name: (info.annotation, info) for name, info in InfillFields.model_fields.items()}
    return create_model("LlamaCppInfillRequest", **fields)


def request_bodies(model: str, tokenizer: Tokenizer) -> dict[str, RequestBody]:
    """Every POST route's body, with an example that runs as it is on this server."""
    hello = [{"role": "user", "content": "Hello!"}]
    return {
        "/v1/completions": RequestBody(
            (P.CompletionRequest,), {"model": model, "prompt": "Once upon a time", "max_tokens": 32}
        ),
        "/v1/chat/completions": RequestBody(
            (P.ChatCompletionRequest,), {"model": model, "messages": hello, "max_tokens": 32}
        ),
        "/v1/responses": RequestBody(
            (responses_body_model(),), {"model": model, "input": "Hello!", "max_output_tokens": 32}
        ),
        "/v1/responses/input_tokens": RequestBody(
            (input_tokens_body_model(),), {"model": model, "input": "Hello!"}
        ),
        "/v1/conversations": RequestBody(
            (CreateConversation,), {"items": [{"role": "user", "content": "Hello!"}]}
        ),
        "/v1/conversations/{conversation_id}": RequestBody(
            (UpdateConversation,), {"metadata": {"topic": "greetings"}}
        ),
        "/v1/conversations/{conversation_id}/items": RequestBody(
            (CreateItems,), {"items": [{"role": "user", "content": "How are you?"}]}
        ),
        "/v1/embeddings": RequestBody((EmbeddingRequest,), {"model": model, "input": "Hello!"}),
        "/score": RequestBody((ScoreRequest,), {"model": model, "text_1": "What is the capital "
                              "of France?", "text_2": ["Paris is the capital of France.",
                                                       "I like cheese."]}),
        "/rerank": RequestBody((RerankRequest,), {"model": model, "query": "What is the capital "
                               "of France?", "documents": ["Paris is the capital of France.",
                                                           "I like cheese."]}),
        "/generate": RequestBody((P.GenerateRequest,), {"prompt": "Hello", "max_new_tokens": 32}),
        "/tokenize": RequestBody(
            (TokenizeCompletionRequest, TokenizeChatRequest, LlamaTokenizeRequest),
            {"model": model, "prompt": "Hello"},
        ),
        "/detokenize": RequestBody(
            (DetokenizeRequest,), {"model": model, "tokens": tokenizer.encode("Hello", False)}
        ),
        **dict.fromkeys(("/completion", "/completions"), RequestBody(
            (llamacpp_body_model(),), {"prompt": "Once upon a time", "n_predict": 32}
        )),
        "/infill": RequestBody((infill_body_model(),), {
            "input_prefix": "def add(a, b):\n    ", "input_suffix": "\n", "n_predict": 16}),
        "/apply-template": RequestBody((ApplyTemplateRequest,), {"messages": hello}),
        **dict.fromkeys(("/embedding", "/embeddings"), RequestBody(
            (EmbeddingFields,), {"content": "Hello!"}
        )),
    }  # fmt: skip
