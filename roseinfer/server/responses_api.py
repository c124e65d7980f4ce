"""The stored responses as /v1/responses uses them (`StoredResponses`): an id held while its
response runs, the finished Response kept, the background ones while they run, and
`GET`/`DELETE /v1/responses/{id}` (`?stream=true&starting_after=N`: a background stream's events
again), `POST /v1/responses/{id}/cancel` and `GET /v1/responses/{id}/input_items`. The store
itself is `responses_store.py`, a background run `responses_background.py`; what a request
continues is read by `responses_input.py`."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from roseinfer.server.errors import APIError
from roseinfer.server.generation import SSE_HEADERS, GenerationGroup
from roseinfer.server.json_text import dumps
from roseinfer.server.responses_background import BackgroundRun, EventBudget, EventsNotKept
from roseinfer.server.responses_input import ResponsesRequest
from roseinfer.server.responses_output import ResponseHead
from roseinfer.server.responses_store import (
    IdTaken,
    Link,
    ResponseNotFound,
    ResponseStore,
    StoredResponse,
)


class ConversationItems(Protocol):
    """The conversations responses continue (`conversations.ConversationStore`)."""

    capacity: int  # how many are kept (0: none)

    def items(self, conversation_id: str) -> list[dict]: ...  # KeyError where there is none
    def add(self, conversation_id: str, items: list[dict], fresh_ids: bool = False) -> None: ...
    def check_room(self, conversation_id: str, items: list[dict]) -> None: ...


AZURE_API_VERSION = "api-version"
_FLAGS = {"true": True, "1": True, "false": False, "0": False}  # a query's booleans

logger = logging.getLogger(__name__)


class StillRunning(KeyError):
    """A background response continued before it has ended."""

    code = "previous_response_running"

    def __str__(self) -> str:
        return (f"Response with id '{self.args[0]}' is still running in the background: "
                "continue it once it has ended")  # fmt: skip


class StoredResponses:
    def __init__(
        self, store: ResponseStore, conversations: ConversationItems | None = None
    ) -> None:
        """`conversations`: where a response continuing one adds its turn."""
        self.store, self.conversations = store, conversations
        # conversation -> the request continuing it (its HTTP request while its prompt is read,
        # then its ResponsesRequest until it ends)
        self._in_use: dict[str, object] = {}
        self.running: dict[str, BackgroundRun] = {}  # background responses, by id
        self.budget = EventBudget(store.max_bytes)  # what their streams' events may hold

    def conversation(self, response_id: str) -> tuple[list[dict], Link]:
        """`ResponseStore.conversation`, a background response still running refused."""
        if response_id in self.running:
            raise StillRunning(response_id)
        return self.store.conversation(response_id)

    @property
    def keeps_conversations(self) -> bool:
        return self.conversations is not None and self.conversations.capacity > 0

    def conversation_items(self, conversation_id: str) -> list[dict]:
        """The items of the conversation a response continues (a KeyError where none)."""
        if self.conversations is None:
            raise KeyError(conversation_id)
        return self.conversations.items(conversation_id)

    def start_background(self, head: ResponseHead, group: GenerationGroup, prompt_tokens: int,
                         constraint_param: str | None, streamed: bool) -> Response:  # fmt: skip
        """Run a response apart from its HTTP request (its id claimed already); the answer
        now: the Response `queued`, or the stream of its events."""
        run = BackgroundRun(head, group, prompt_tokens, constraint_param, streamed, self.budget,
                            input_items(head.request.input))  # fmt: skip
        self.running[head.id] = run
        run.start(self._ended)
        if streamed:
            return StreamingResponse(run.follow(), media_type="text/event-stream",
                                     headers=SSE_HEADERS)  # fmt: skip
        return Response(dumps(run.snapshot()), media_type="application/json")

    def finish(self, run: ResponsesRequest, response: dict, content: str | None = None) -> None:
        """A Response has ended: its turn added to the conversation it continues (where it
        completed, or was cut by its limit), and it is kept where its request asked (its
        input items the same, ids too, in both)."""
        items = input_items(run.input)
        self._add_turn(run, response, items)
        self.keep(run, response, content, items=items)

    def _add_turn(self, run: ResponsesRequest, response: dict, items: list[dict]) -> None:
        """Its input and output items added to its conversation; a call cut short (its
        arguments unfinished JSON) is left out, as `ResponsesRequest.turn` leaves it out: no
        result could answer it."""
        conversation = run.echo.conversation
        if conversation is None or response["status"] not in ("completed", "incomplete"):
            return
        assert self.conversations is not None
        output = [item for item in response["output"]
                  if item["type"] != "function_call" or item["status"] == "completed"]  # fmt: skip
        try:
            self.conversations.add(conversation, items + output, fresh_ids=True)
        except (KeyError, APIError) as e:  # deleted meanwhile, or too large: the answer stands
            logger.warning("response %s not added to conversation %s: %s", response["id"],
                           conversation, e)  # fmt: skip

    def _ended(self, background: BackgroundRun) -> None:
        """A background response has ended: stored (with its stream's events where they fit;
        where even the Response alone is past --responses-store-mib, a `failed` one saying
        so, for its pollers), its id free."""
        request, final = background.head.request, background.final
        assert final is not None
        items = background.items
        self._add_turn(request, final, items)
        events = None if background.events is None else tuple(background.events)
        if not self.keep(request, final, None, events, background.events_bytes, items):
            if events is None or not self.keep(request, final, items=items):
                size = len(dumps(final).encode())
                error = {"code": "server_error", "message": f"the response ({size:,} bytes) is "
                         "larger than --responses-store-mib: not kept"}  # fmt: skip
                self.keep(request, background.head.response("failed", [], final["usage"], error))
        background.release_events()
        self.release(background.head.id, request)
        self.running.pop(background.head.id, None)

    async def shutdown(self) -> None:
        """Cancel what runs in the background (the server is stopping)."""
        await asyncio.gather(*(run.cancel() for run in list(self.running.values())))

    def hold(self, conversation: str, owner: object) -> None:
        """Hold a conversation for a response about to read it (`owner`: its request), from
        before it reads the conversation until it ends (`hand_over`, `free`): another
        response on it meanwhile is a 400, as OpenAI's (`conversation_locked`: each turn reads
        the one before)."""
        if conversation in self._in_use:
            raise APIError(400, f"Another response is running on conversation {conversation}: "
                                "retry once it has ended", param="conversation",
                           code="conversation_locked")  # fmt: skip
        self._in_use[conversation] = owner

    def hand_over(self, conversation: str, owner: object, run: ResponsesRequest) -> None:
        """The hold passes to the response its request became (whose end frees it)."""
        if self._in_use.get(conversation) is owner:
            self._in_use[conversation] = run

    def free(self, conversation: str, owner: object) -> None:
        if self._in_use.get(conversation) is owner:
            del self._in_use[conversation]

    def claim(self, run: ResponsesRequest, response_id: str, fallback: str | None) -> str:
        """The id of a response about to run: `response_id`, held while it runs if it is to be
        stored (`release` frees it, kept or not); where a stored or running one has it,
        `fallback` (an id of ours), or a 400 naming `request_id` without one. A conversation
        that could not take this turn's input is a 400 now, not a turn lost later."""
        conversation = run.echo.conversation
        if conversation is not None:
            assert self.conversations is not None
            try:
                self.conversations.check_room(conversation, input_items(run.input))
            except KeyError as e:  # (deleted while the prompt was read)
                raise APIError(400, str(e), param="conversation",
                               code="conversation_not_found") from None  # fmt: skip
        if run.echo.store:
            try:
                self.store.claim(response_id)
            except IdTaken as e:
                if fallback is None:
                    raise APIError(400, f"{e}: give another request_id, or store: false",
                                   param="request_id", code="invalid_value") from None  # fmt: skip
                self.store.claim(fallback)
                response_id = fallback
        return response_id

    def release(self, response_id: str, run: ResponsesRequest) -> None:
        """The response has ended (kept or not): its id and its conversation free again."""
        self.store.release(response_id)
        if run.echo.conversation is not None:
            self.free(run.echo.conversation, run)

    def keep(self, run: ResponsesRequest, response: dict, content: str | None = None,
             events: tuple[str, ...] | None = None, events_bytes: int = 0,
             items: list[dict] | None = None) -> bool:  # fmt: skip
        """Store a finished Response whose request asked for it (`content`: its JSON, where
        it was written already; `events`: a background stream's, to replay; `items`: its
        input items, where they were listed already; the conversation's items it read listed
        before them, as OpenAI's); False where it was to be kept and is not."""
        if not run.echo.store:
            return True
        own = input_items(run.input) if items is None else items
        try:
            content = dumps(response) if content is None else content
            kept = self.store.put(response["id"], content.encode(), run.turn(response),
                                  run.previous, [*run.conversation_items, *own], events,
                                  events_bytes)  # fmt: skip
        except Exception:  # a bug: the answer goes out all the same
            logger.exception("could not store response %s", response["id"])
            return False
        if not kept:
            what = "with its events " if events else ""
            logger.warning("response %s %sis larger than --responses-store-mib: not kept",
                           response["id"], what)  # fmt: skip
        return kept

    async def released(self, events: AsyncIterator[str], response_id: str,
                       run: ResponsesRequest) -> AsyncIterator[str]:  # fmt: skip
        """`events`, then the id free again, however the stream ends (a client gone before the
        end leaves nothing stored)."""
        try:
            async for event in events:
                yield event
        finally:
            self.release(response_id, run)

    def add_routes(self, api: APIRouter) -> None:
        """`GET` and `DELETE /v1/responses/{id}`, `POST /v1/responses/{id}/cancel`,
        `GET /v1/responses/{id}/input_items` (`:path`: a request_id may hold a slash)."""

        @api.get("/v1/responses/{response_id:path}/input_items")
        async def list_input_items(response_id: str, request: Request) -> dict:
            """OpenAI's page of a response's own input items: `limit` (1-100, default 20),
            `order` (`desc`, the default, or `asc`), `after` (an item id of the list)."""
            query = query_params(request, ("limit", "order", "after"))
            running = self.running.get(response_id)
            if running is not None:
                items = running.items  # (the ids it will be stored with)
            else:
                items = json.loads(self._get(response_id).items_json)
            return page([item["id"] for item in items], items.__getitem__, query)

        @api.post("/v1/responses/{response_id:path}/cancel")
        async def cancel_response(response_id: str, request: Request) -> Response:
            """Cancel a background response: `cancelled` (again: the same answer); one that
            ended otherwise, or did not run in the background, is a 400."""
            query_params(request, ())
            await no_body(request)
            running = self.running.get(response_id)
            if running is not None:
                await running.cancel()
                answer = running.snapshot()
            else:
                answer = json.loads(self._get(response_id).response_json)
                if not answer["background"]:
                    raise APIError(400, "Only responses created with background=true can be "
                                        "cancelled", param="response_id",
                                   code="invalid_value")  # fmt: skip
            if answer["status"] != "cancelled":
                article = "an" if answer["status"][0] in "aeiou" else "a"
                raise APIError(400, f"Cannot cancel {article} {answer['status']} response.",
                               param="response_id", code="invalid_value")  # fmt: skip
            return Response(dumps(answer), media_type="application/json")

        @api.get("/v1/responses/{response_id:path}")
        async def retrieve_response(response_id: str, request: Request) -> Response:
            """The Response (a background one as it stands); `stream=true`: a background
            stream's events after `starting_after` (all without it), then, while it runs, the
            new ones as they come."""
            query = query_params(request, ("stream", "starting_after", "include_obfuscation"))
            running = self.running.get(response_id)
            _flag(query, "include_obfuscation")  # a no-op: no event is ever padded
            if not _flag(query, "stream"):
                if "starting_after" in query:
                    raise APIError(400, "starting_after acts on a stream: give stream=true too",
                                   param="starting_after", code="invalid_value")  # fmt: skip
                if running is not None:
                    return Response(dumps(running.snapshot()), media_type="application/json")
                answer = self._get(response_id).response_json
                return Response(answer, media_type="application/json")
            after = _starting_after(query)
            stored = self._get(response_id) if running is None else None
            events: AsyncIterator[str] | Iterator[str] | None = None
            try:
                if running is not None and running.streamed:
                    events = running.follow(after)
                elif stored is not None and stored.events is not None:
                    events = iter(stored.events[after + 1 :])
            except EventsNotKept:
                pass
            if events is None:
                why = ("it was not created with background=true and stream=true"
                       if running is not None and not running.streamed
                       else "its events are not kept: it did not stream in the background, or "
                       "they were past --responses-store-mib")  # fmt: skip
                raise APIError(400, f"This response cannot be streamed: {why}", param="stream",
                               code="invalid_value")  # fmt: skip
            return StreamingResponse(events, media_type="text/event-stream", headers=SSE_HEADERS)

        @api.delete("/v1/responses/{response_id:path}")
        async def delete_response(response_id: str, request: Request) -> dict:
            """Remove a stored response; a background one still running is cancelled first."""
            query_params(request, ())
            running = self.running.get(response_id)
            if running is not None:
                await running.cancel()
            try:
                self.store.delete(response_id)
            except ResponseNotFound as e:
                if running is None:  # (one cancelled but too large to keep is gone already)
                    raise APIError(404, str(e), param="response_id", code="not_found") from None
            return {"id": response_id, "object": "response", "deleted": True}  # OpenAI's

    def _get(self, response_id: str) -> StoredResponse:
        """The stored response (a 404 where there is none)."""
        try:
            return self.store.get(response_id)
        except ResponseNotFound as e:
            raise APIError(404, str(e), param="response_id", code="not_found") from None


def query_params(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    """The request's query parameters, each one of `allowed` and given once (a 400 naming
    another, or one given twice); Azure OpenAI's `api-version`, which its client always sends,
    is taken and left out (a no-op: one API here)."""
    query: dict[str, str] = {}
    for name, value in request.query_params.multi_items():
        if name == AZURE_API_VERSION:
            continue
        if name not in allowed:
            raise APIError(400, f"query parameter '{name}' is not supported by this server",
                           param=name, code="unsupported_field")  # fmt: skip
        if name in query:
            raise APIError(400, f"query parameter '{name}' is given twice", param=name,
                           code="invalid_value")  # fmt: skip
        query[name] = value
    return query


async def no_body(request: Request) -> None:
    """A 400 where a request that takes no body has one (nothing, `{}` or `null` pass)."""
    raw = (await request.body()).strip()
    try:
        empty = not raw or json.loads(raw) in ({}, None)
    except ValueError:
        empty = False
    if not empty:
        raise APIError(400, "this request takes no body", code="invalid_value")


def _flag(query: dict[str, str], name: str) -> bool:
    value = query.get(name, "false")
    if value.lower() not in _FLAGS:
        raise APIError(400, f"{name} must be true or false, got {value!r}", param=name,
                       code="invalid_value")  # fmt: skip
    return _FLAGS[value.lower()]


def _starting_after(query: dict[str, str]) -> int:
    """`starting_after`: a sequence number (-1 where it is left out: every event)."""
    value = query.get("starting_after")
    if value is None:
        return -1
    if not (value.isascii() and value.isdigit() and len(value) <= 18):
        raise APIError(400, f"starting_after must be a sequence number (an integer >= 0), got "
                            f"{value!r}", param="starting_after", code="invalid_value")  # fmt: skip
    return int(value)


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
        elif kind == "reasoning":
            item["summary"] = raw.get("summary") or []
            item["content"] = [{"type": p["type"], "text": p["text"]}
                               for p in raw.get("content") or ()]  # fmt: skip
            item["encrypted_content"] = None
        else:
            keys = (
                ("call_id", "name", "arguments")
                if kind == "function_call"
                else ("call_id", "output")
            )
            item.update({key: raw[key] for key in keys})
        prefix = {"message": "msg", "function_call": "fc", "reasoning": "rs"}.get(kind, "fco")
        item["id"] = raw.get("id") or f"{prefix}_{uuid.uuid4().hex}"
        item["status"] = raw.get("status") or "completed"
        items.append(item)
    return items


def page(ids: list[str], load: Callable[[int], dict], query: dict[str, str]) -> dict:
    """OpenAI's cursor page, for `limit`, `order` and `after`, of the items whose `ids` are
    given in the order sent (`load(i)`: the i-th item, read for the page's items only)."""
    text = query.get("limit", "20")
    limit = int(text) if text.isascii() and text.isdigit() and len(text) <= 6 else 0
    if not 1 <= limit <= 100:
        raise APIError(400, "limit must be an integer in [1, 100]", param="limit",
                       code="invalid_value")  # fmt: skip
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise APIError(400, "order must be 'asc' or 'desc'", param="order", code="invalid_value")
    positions = list(range(len(ids))) if order == "asc" else list(range(len(ids) - 1, -1, -1))
    start = 0
    if "after" in query:
        at = [k for k, i in enumerate(positions) if ids[i] == query["after"]]
        if not at:
            raise APIError(400, f"after {query['after']!r} is no item of this list",
                           param="after", code="invalid_value")  # fmt: skip
        start = at[0] + 1
    chosen = [load(i) for i in positions[start : start + limit]]
    return {"object": "list", "data": chosen, "first_id": chosen[0]["id"] if chosen else None,
            "last_id": chosen[-1]["id"] if chosen else None,
            "has_more": start + limit < len(positions)}  # fmt: skip
