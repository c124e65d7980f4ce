"""The stored responses as /v1/responses uses them (`StoredResponses`): an id held while its
response runs, the finished Response kept, and `GET`/`DELETE /v1/responses/{id}`. The store
itself is `responses_store.py`; what a request continues is read by `responses_input.py`."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import Response

from roseinfer.server.errors import APIError
from roseinfer.server.responses_input import ResponsesRequest
from roseinfer.server.responses_store import IdTaken, ResponseNotFound, ResponseStore

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

    def keep(self, run: ResponsesRequest, answer: str) -> None:
        """Store a finished Response (`answer`: its JSON) whose request asked for it."""
        if not run.echo.store:
            return
        response = json.loads(answer)
        try:
            kept = self.store.put(response["id"], answer.encode(), run.turn(response),
                                  run.previous)  # fmt: skip
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
        """`GET` and `DELETE /v1/responses/{id}` (`:path`: a request_id may hold a slash)."""

        @api.get("/v1/responses/{response_id:path}")
        async def retrieve_response(response_id: str, request: Request) -> Response:
            answer = self.store.get(self._stored(response_id, request)).response_json
            return Response(answer, media_type="application/json")

        @api.delete("/v1/responses/{response_id:path}")
        async def delete_response(response_id: str, request: Request) -> dict:
            self.store.delete(self._stored(response_id, request))
            return {"id": response_id, "object": "response", "deleted": True}  # OpenAI's

    def _stored(self, response_id: str, request: Request) -> str:
        """`response_id`, stored (a 404 otherwise); a query parameter is refused, naming it
        (OpenAI's `stream`, `include`, `starting_after` replay background responses)."""
        for name in request.query_params:
            raise APIError(400, f"query parameter '{name}' is not supported by this server",
                           param=name, code="unsupported_field")  # fmt: skip
        try:
            self.store.get(response_id)
        except ResponseNotFound as e:
            raise APIError(404, str(e), param="response_id", code="not_found") from None
        return response_id
