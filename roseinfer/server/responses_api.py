"""The stored responses as /v1/responses uses them (`StoredResponses`): an id held while its
response runs, the finished Response kept, and `GET`/`DELETE /v1/responses/{id}` and
`GET /v1/responses/{id}/input_items`. The store itself is `responses_store.py`; what a request
continues is read by `responses_input.py`."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from roseinfer.server.errors import APIError
from roseinfer.server.responses_input import ResponsesRequest
from roseinfer.server.responses_store import IdTaken, ResponseNotFound, ResponseStore
from roseinfer.server.serving import dumps

logger = logging.getLogger(__name__)


class StoredResponses:
    def __init__(self, store: ResponseStore) -> None:
        self.store = store

    def claim(self, run: ResponsesRequest, response_id: str, fallback: str | None) -> str:
        """The id of a response about to run: `response_id`, held while it runs if it is to be
        stored (`release` frees it, kept or not); where a stored or running one has it,
        `fallback` (an id of ours), or a 400 naming `request_id` without one."""
        if not run.echo.store:
            return response_id
        try:
            self.store.claim(response_id)
        except IdTaken as e:
            if fallback is None:
                raise APIError(400, f"{e}: give another request_id, or store: false",
                               param="request_id", code="invalid_value") from None  # fmt: skip
            self.store.claim(fallback)
            return fallback
        return response_id

    def release(self, response_id: str) -> None:
        self.store.release(response_id)

    def keep(self, run: ResponsesRequest, response: dict, content: str | None = None) -> None:
        """Store a finished Response whose request asked for it (`content`: its JSON, where
        it was written already)."""
        if not run.echo.store:
            return
        try:
            content = dumps(response) if content is None else content
            kept = self.store.put(response["id"], content.encode(), run.turn(response),
                                  run.previous, input_items(run.input))  # fmt: skip
        except Exception:  # a bug: the answer goes out all the same
            logger.exception("could not store response %s", response["id"])
            return
        if not kept:
            logger.warning("response %s is larger than --responses-store-mib: not kept",
                           response["id"])  # fmt: skip

    async def released(self, events: AsyncIterator[str], response_id: str) -> AsyncIterator[str]:
        """`events`, then the id free again, however the stream ends (a client gone before the
        end leaves nothing stored)."""
        try:
            async for event in events:
                yield event
        finally:
            self.release(response_id)

    def add_routes(self, api: APIRouter) -> None:
        """`GET` and `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`
        (`:path`: a request_id may hold a slash)."""

        @api.get("/v1/responses/{response_id:path}/input_items")
        async def list_input_items(response_id: str, request: Request) -> dict:
            """OpenAI's page of a response's own input items: `limit` (1-100, default 20),
            `order` (`desc`, the default, or `asc`), `after` (an item id of the list)."""
            query = dict(request.query_params)
            for name in query:
                if name not in ("limit", "order", "after"):
                    raise APIError(400, f"query parameter '{name}' is not supported by this "
                                        "server", param=name, code="unsupported_field")  # fmt: skip
            self._stored(response_id, request, allow_query=True)
            items = json.loads(self.store.get(response_id).items_json)
            return _page(items, query)

        @api.get("/v1/responses/{response_id:path}")
        async def retrieve_response(response_id: str, request: Request) -> Response:
            answer = self.store.get(self._stored(response_id, request)).response_json
            return Response(answer, media_type="application/json")

        @api.delete("/v1/responses/{response_id:path}")
        async def delete_response(response_id: str, request: Request) -> dict:
            self.store.delete(self._stored(response_id, request))
            return {"id": response_id, "object": "response", "deleted": True}  # OpenAI's

    def _stored(self, response_id: str, request: Request, allow_query: bool = False) -> str:
        """`response_id`, stored (a 404 otherwise); a query parameter is refused, naming it
        (OpenAI's `stream`, `include`, `starting_after` replay background responses), unless
        the caller reads them (`allow_query`)."""
        for name in () if allow_query else request.query_params:
            raise APIError(400, f"query parameter '{name}' is not supported by this server",
                           param=name, code="unsupported_field")  # fmt: skip
        try:
            self.store.get(response_id)
        except ResponseNotFound as e:
            raise APIError(404, str(e), param="response_id", code="not_found") from None
        return response_id


def input_items(given: str | list) -> list[dict]:
    """A request's `input` as OpenAI lists its items: each with an id (its own where it was
    sent one) and a status, text as content parts."""
    if isinstance(given, str):
        given = [{"role": "user", "content": given}]
    items = []
    for raw in given:
        kind = raw.get("type", "message")
        item: dict[str, Any] = {"type": kind}
        if kind == "message":
            part = "output_text" if raw["role"] == "assistant" else "input_text"
            content = raw["content"]
            if isinstance(content, str):
                content = [{"type": part, "text": content}]
            item["role"] = raw["role"]
            item["content"] = [{"type": p["type"], "text": p["text"],
                                **({"annotations": []} if part == "output_text" else {})}
                               for p in content]  # fmt: skip
        else:
            keys = (
                ("call_id", "name", "arguments")
                if kind == "function_call"
                else ("call_id", "output")
            )
            item.update({key: raw[key] for key in keys})
        prefix = {"message": "msg", "function_call": "fc"}.get(kind, "fco")
        item["id"] = raw.get("id") or f"{prefix}_{uuid.uuid4().hex}"
        item["status"] = raw.get("status") or "completed"
        items.append(item)
    return items


def _page(items: list[dict], query: dict[str, str]) -> dict:
    """OpenAI's cursor page of `items` (in the order sent) for `limit`, `order`, `after`."""
    try:
        limit = int(query.get("limit", "20"))
    except ValueError:
        limit = 0
    if not 1 <= limit <= 100:
        raise APIError(400, "limit must be an integer in [1, 100]", param="limit",
                       code="invalid_value")  # fmt: skip
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise APIError(400, "order must be 'asc' or 'desc'", param="order", code="invalid_value")
    ordered = items if order == "asc" else items[::-1]
    start = 0
    if "after" in query:
        ids = [item["id"] for item in ordered]
        if query["after"] not in ids:
            raise APIError(400, f"after {query['after']!r} is no item of this response",
                           param="after", code="invalid_value")  # fmt: skip
        start = ids.index(query["after"]) + 1
    page = ordered[start : start + limit]
    return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None,
            "has_more": start + limit < len(ordered)}  # fmt: skip
