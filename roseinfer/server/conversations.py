"""OpenAI's Conversations API (`client.conversations`): conversations kept in memory, their items
listed, added and deleted, and continued by /v1/responses' `conversation`.

A conversation holds OpenAI's items (messages, function calls and their outputs), each with its
id: those it was created with or was given (`POST .../items`, checked as /v1/responses checks
`input`), and, after each response that continues it, that response's input and output items
(a response that completed or was cut by its limit: not one that failed or was cancelled). A
response with `conversation` sees its items before its own input. The store is bounded as the
stored responses are, apart from them (`--responses-store-size` conversations and
`--responses-store-mib` of their JSON, the least recently used dropped first); each item is
kept as JSON text, so nothing a later request sends can change it; nothing survives a restart.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field

from roseinfer.server import protocol as P
from roseinfer.server.body_check import FieldError, check_body
from roseinfer.server.errors import APIError, validated
from roseinfer.server.field_checks import metadata
from roseinfer.server.jsonbody import read_request_json
from roseinfer.server.responses_api import input_items, no_body, page, query_params
from roseinfer.server.responses_fields import RESPONSES
from roseinfer.server.responses_input import responses_request

logger = logging.getLogger(__name__)

MAX_ITEMS = 20  # OpenAI's: items added at a time


class ConversationNotFound(KeyError):
    def __str__(self) -> str:
        return f"Conversation with id '{self.args[0]}' not found."


@dataclass
class Conversation:
    id: str
    created_at: int
    metadata: dict[str, str]
    items: list[str] = field(default_factory=list)  # each item's JSON, oldest first
    size: int = 0  # bytes of JSON held

    def body(self) -> dict:
        return {"id": self.id, "object": "conversation", "created_at": self.created_at,
                "metadata": self.metadata}  # fmt: skip


class ConversationStore:
    def __init__(self, capacity: int, max_bytes: int) -> None:
        self.capacity, self.max_bytes = capacity, max_bytes  # capacity 0: none are kept
        self._items: OrderedDict[str, Conversation] = OrderedDict()
        self.num_bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def create(self, meta: dict[str, str], items: list[dict]) -> Conversation:
        conversation = Conversation(f"conv_{uuid.uuid4().hex}", P.now(), dict(meta))
        self._items[conversation.id] = conversation
        try:
            self.add(conversation.id, items)
        except APIError:  # (too large: not kept)
            del self._items[conversation.id]
            raise
        self._bound()
        return conversation

    def get(self, conversation_id: str) -> Conversation:
        conversation = self._items.get(conversation_id)
        if conversation is None:
            raise ConversationNotFound(conversation_id)
        self._items.move_to_end(conversation_id)
        return conversation

    def items(self, conversation_id: str) -> list[dict]:
        """Its items, new objects, oldest first."""
        return [json.loads(item) for item in self.get(conversation_id).items]

    def add(self, conversation_id: str, items: list[dict]) -> None:
        """Append `items` (a 400 where the conversation alone would be past the bound)."""
        conversation = self.get(conversation_id)
        texts = [json.dumps(item) for item in items]
        size = sum(len(t.encode()) for t in texts)
        if conversation.size + size > self.max_bytes:
            raise APIError(400, f"conversation {conversation_id} would hold more than "
                                "--responses-store-mib of items", param="items",
                           code="conversation_too_large")  # fmt: skip
        conversation.items += texts
        conversation.size += size
        self.num_bytes += size
        self._bound()

    def delete_item(self, conversation_id: str, item_id: str) -> None:
        conversation = self.get(conversation_id)
        for i, text in enumerate(conversation.items):
            if json.loads(text)["id"] == item_id:
                del conversation.items[i]
                conversation.size -= len(text.encode())
                self.num_bytes -= len(text.encode())
                return
        raise APIError(404, f"Item with id '{item_id}' not found.", param="item_id",
                       code="not_found")  # fmt: skip

    def delete(self, conversation_id: str) -> None:
        conversation = self._items.pop(conversation_id, None)
        if conversation is None:
            raise ConversationNotFound(conversation_id)
        self.num_bytes -= conversation.size

    def _bound(self) -> None:
        while len(self._items) > self.capacity or self.num_bytes > self.max_bytes:
            dropped = self._items.popitem(last=False)[1]
            self.num_bytes -= dropped.size


class CreateConversation(P.RequestBase):
    items: list[Any] | None = None
    metadata: dict[str, str] | None = None


class UpdateConversation(P.RequestBase):
    metadata: dict[str, str]


class CreateItems(P.RequestBase):
    items: list[Any] = Field(min_length=1)


def checked_items(items: list[Any]) -> list[dict]:
    """`items` as OpenAI's items with ids (a 400 naming `items.i...` where /v1/responses would
    refuse them as its `input`)."""
    if not items:
        return []
    if len(items) > MAX_ITEMS:
        raise APIError(400, f"{len(items)} items: at most {MAX_ITEMS} at a time", param="items")
    try:
        body = check_body({"input": items}, RESPONSES)
        responses_request(body, None)
    except FieldError as e:
        param = e.param and ("items" + e.param.removeprefix("input"))
        raise APIError(400, str(e).replace("input", "items"), param=param, code=e.code) from None
    return input_items(items)


def add_conversation_routes(api: APIRouter, store: ConversationStore) -> None:
    """The Conversations API's routes on `api` (the API-key-protected router)."""

    def get(conversation_id: str) -> Conversation:
        try:
            return store.get(conversation_id)
        except ConversationNotFound as e:
            raise APIError(404, str(e), param="conversation_id", code="not_found") from None

    def checked_metadata(meta: dict[str, str] | None) -> dict[str, str]:
        if meta is not None and not metadata(meta, {}):
            raise APIError(400, "metadata must hold up to 16 strings of up to 512 characters, "
                                "keys of up to 64", param="metadata")  # fmt: skip
        return meta or {}

    @api.post("/v1/conversations")
    async def create_conversation(request: Request) -> dict:
        query_params(request, ())
        if store.capacity == 0:
            raise APIError(400, "this server keeps no conversations (--responses-store-size 0)")
        body = validated(CreateConversation, await read_request_json(request))
        items = checked_items(body.items or [])
        return store.create(checked_metadata(body.metadata), items).body()

    @api.get("/v1/conversations/{conversation_id}")
    async def retrieve_conversation(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        return get(conversation_id).body()

    @api.post("/v1/conversations/{conversation_id}")
    async def update_conversation(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        body = validated(UpdateConversation, await read_request_json(request))
        conversation = get(conversation_id)
        conversation.metadata = checked_metadata(body.metadata)
        return conversation.body()

    @api.delete("/v1/conversations/{conversation_id}")
    async def delete_conversation(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        get(conversation_id)
        store.delete(conversation_id)
        return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    @api.get("/v1/conversations/{conversation_id}/items")
    async def list_items(conversation_id: str, request: Request) -> dict:
        """OpenAI's page of its items: `limit` (1-100, default 20), `order` (`desc`, the
        default, or `asc`), `after` (an item id)."""
        query = query_params(request, ("limit", "order", "after"))
        get(conversation_id)
        return page(store.items(conversation_id), query)

    @api.post("/v1/conversations/{conversation_id}/items")
    async def create_items(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        body = validated(CreateItems, await read_request_json(request))
        get(conversation_id)
        items = checked_items(body.items)
        store.add(conversation_id, items)
        return {"object": "list", "data": items, "first_id": items[0]["id"],
                "last_id": items[-1]["id"], "has_more": False}  # fmt: skip

    @api.get("/v1/conversations/{conversation_id}/items/{item_id}")
    async def retrieve_item(conversation_id: str, item_id: str, request: Request) -> dict:
        query_params(request, ())
        get(conversation_id)
        for item in store.items(conversation_id):
            if item["id"] == item_id:
                return item
        raise APIError(404, f"Item with id '{item_id}' not found.", param="item_id",
                       code="not_found")  # fmt: skip

    @api.delete("/v1/conversations/{conversation_id}/items/{item_id}")
    async def delete_item(conversation_id: str, item_id: str, request: Request) -> dict:
        """Remove one item; the answer is the conversation (OpenAI's)."""
        query_params(request, ())
        await no_body(request)
        store.delete_item(get(conversation_id).id, item_id)
        return get(conversation_id).body()
