"""OpenAI's Conversations API (`client.conversations`): conversations kept in memory, their items
listed, added and deleted, and continued by /v1/responses' `conversation`.

A conversation holds OpenAI's items (messages, function calls and their outputs), each with its
id: those it was created with or was given (`POST .../items`, checked as /v1/responses checks
`input`), and, after each response that continues it, that response's input and output items
(a response that completed or was cut by its limit: not one that failed or was cancelled). A
response with `conversation` sees its items before its own input. The store is bounded apart
from the stored responses (`--conversations-store-size` conversations and
`--conversations-store-mib` of their JSON, the least recently used dropped first); each item is
kept as JSON text, so nothing a later request sends can change it; nothing survives a restart.
"""

from __future__ import annotations

import json
import logging
import re
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
from roseinfer.server.json_text import dumps
from roseinfer.server.jsonbody import read_request_json
from roseinfer.server.responses_api import input_items, no_body, page, query_params
from roseinfer.server.responses_fields import RESPONSES
from roseinfer.server.responses_input import responses_request

logger = logging.getLogger(__name__)

MAX_ITEMS = 20  # OpenAI's: items added at a time


class ConversationNotFound(KeyError):
    def __str__(self) -> str:
        return f"Conversation with id '{self.args[0]}' not found."


_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # an item id, as it can be named in a path


@dataclass(frozen=True)
class StoredItem:
    id: str
    json: str  # the item, as added
    chars: int  # of its text (what the prompt reads of it)
    lead: bool  # a system or developer message (a conversation's head: always read)
    type: str  # the item's: message, function_call, function_call_output, reasoning

    @property
    def size(self) -> int:
        return len(self.json.encode())


@dataclass
class Conversation:
    id: str
    created_at: int
    metadata: dict[str, str]
    items: list[StoredItem] = field(default_factory=list)  # oldest first
    size: int = 0  # bytes of JSON held

    def body(self) -> dict:
        return {"id": self.id, "object": "conversation", "created_at": self.created_at,
                "metadata": self.metadata}  # fmt: skip


class ConversationStore:
    def __init__(self, capacity: int, max_bytes: int, read_chars: int) -> None:
        """`read_chars`: the most text a prompt can hold (the context times the longest
        token's characters): a response reads no older items than that much text back."""
        self.capacity, self.max_bytes = capacity, max_bytes  # capacity 0: none are kept
        self.read_chars = read_chars
        self._conversations: OrderedDict[str, Conversation] = OrderedDict()
        self.num_bytes = 0

    def __len__(self) -> int:
        return len(self._conversations)

    def __contains__(self, conversation_id: str) -> bool:
        return conversation_id in self._conversations

    def create(self, meta: dict[str, str], items: list[dict]) -> Conversation:
        conversation = Conversation(f"conv_{uuid.uuid4().hex}", P.now(), dict(meta))
        self._conversations[conversation.id] = conversation
        try:
            self.add(conversation.id, items)
        except APIError:  # (too large, or its ids: not kept)
            del self._conversations[conversation.id]
            raise
        self._bound()
        return conversation

    def get(self, conversation_id: str) -> Conversation:
        conversation = self._conversations.get(conversation_id)
        if conversation is None:
            raise ConversationNotFound(conversation_id)
        self._conversations.move_to_end(conversation_id)
        return conversation

    def items(self, conversation_id: str) -> list[dict]:
        """What a response continuing it reads (new objects, oldest first): its leading
        system messages, then its newest items up to `read_chars` of text (those before could
        not fit in a prompt with them)."""
        stored = self.get(conversation_id).items
        head = next((i for i, item in enumerate(stored) if not item.lead), len(stored))
        start, chars = len(stored), 0
        while start > head and chars + stored[start - 1].chars <= self.read_chars:
            start -= 1
            chars += stored[start].chars
        if start > head:  # (one item past it all the same: the prompt then says it is too long)
            start -= 1
            # from the message before, not from a call's result: a result without its call
            # answers nothing (and dropping it could make the rest fit, older items silently
            # left out)
            while start > head and stored[start].type in ("function_call", "function_call_output"):
                start -= 1
        while start < len(stored) and stored[start].type == "function_call_output":
            start += 1  # (a result whose call is not in the conversation answers nothing)
        return [json.loads(item.json) for item in stored[:head] + stored[start:]]

    def check_room(self, conversation_id: str, items: list[dict]) -> None:
        """A 400 where `items` would take the conversation past the bound."""
        size = sum(len(dumps(item).encode()) for item in items)
        if self.get(conversation_id).size + size > self.max_bytes:
            raise _too_large(conversation_id, "conversation")

    def add(self, conversation_id: str, items: list[dict], fresh_ids: bool = False) -> None:
        """Append `items`: an id it holds already or given twice is a 400 naming
        `items.i.id`, or, with `fresh_ids` (a response's turn), the item gets a new one; a
        400 where the conversation would be past the bound."""
        conversation = self.get(conversation_id)
        taken = {item.id for item in conversation.items}
        stored = []
        for i, item in enumerate(items):
            if item["id"] in taken or not _ID.fullmatch(item["id"]):
                if not fresh_ids:
                    why = "is taken" if item["id"] in taken else "is not 1-128 of A-Z a-z 0-9 _ -"
                    raise APIError(400, f"item id {item['id']!r} {why}", param=f"items.{i}.id",
                                   code="invalid_value")  # fmt: skip
                item = {**item, "id": f"{item['id'].split('_')[0][:8]}_{uuid.uuid4().hex}"}
            taken.add(item["id"])
            lead = item["type"] == "message" and item.get("role") in ("system", "developer")
            stored.append(StoredItem(item["id"], dumps(item), _text_chars(item), lead,
                                     item["type"]))  # fmt: skip
        size = sum(item.size for item in stored)
        if conversation.size + size > self.max_bytes:
            raise _too_large(conversation_id, "items")
        conversation.items += stored
        conversation.size += size
        self.num_bytes += size
        self._bound()

    def item(self, conversation_id: str, item_id: str) -> dict:
        """One of its items (a 404 where it has none by that id)."""
        for item in self.get(conversation_id).items:
            if item.id == item_id:
                return json.loads(item.json)
        raise _no_item(item_id)

    def delete_item(self, conversation_id: str, item_id: str) -> None:
        conversation = self.get(conversation_id)
        for i, item in enumerate(conversation.items):
            if item.id == item_id:
                del conversation.items[i]
                conversation.size -= item.size
                self.num_bytes -= item.size
                return
        raise _no_item(item_id)

    def delete(self, conversation_id: str) -> None:
        conversation = self._conversations.pop(conversation_id, None)
        if conversation is None:
            raise ConversationNotFound(conversation_id)
        self.num_bytes -= conversation.size

    def _bound(self) -> None:
        while len(self._conversations) > self.capacity or self.num_bytes > self.max_bytes:
            dropped = self._conversations.popitem(last=False)[1]
            self.num_bytes -= dropped.size


def _too_large(conversation_id: str, param: str) -> APIError:
    return APIError(400, f"conversation {conversation_id} would hold more than "
                         "--conversations-store-mib of items", param=param,
                    code="conversation_too_large")  # fmt: skip


def _no_item(item_id: str) -> APIError:
    return APIError(404, f"Item with id '{item_id}' not found.", param="item_id", code="not_found")


def _text_chars(item: dict) -> int:
    """The characters of an item's text: what a prompt holds of it, at the least."""
    texts = [item.get(key) for key in ("content", "arguments", "output", "name")]
    total = 0
    for text in texts:
        if isinstance(text, str):
            total += len(text)
        elif isinstance(text, list):
            total += sum(len(p.get("text", "")) for p in text if isinstance(p, dict))
    return total


class CreateConversation(P.RequestBase):
    items: list[Any] | None = None
    metadata: dict[str, str] | None = None


class UpdateConversation(P.RequestBase):
    metadata: dict[str, str] | None  # (null: none, as OpenAI's type allows)


class CreateItems(P.RequestBase):
    items: list[Any] = Field(min_length=1)


def checked_items(items: list[Any]) -> list[dict]:
    """`items` as OpenAI's items with ids (a 400 naming `items.i...` where /v1/responses would
    refuse them as its `input`, a call's arguments that are no JSON object too)."""
    if not items:
        return []
    if len(items) > MAX_ITEMS:
        raise APIError(400, f"{len(items)} items: at most {MAX_ITEMS} at a time", param="items")
    try:
        run = responses_request(check_body({"input": items}, RESPONSES), None)
    except FieldError as e:
        raise _as_items(e.api_error()) from None
    try:
        validated(P.ChatCompletionRequest, run.chat)
    except APIError as e:
        raise _as_items(run.renamed(e)) from None
    for i, item in enumerate(items):  # (what chat's render would refuse once a response reads
        # them: a message without its text, a call's arguments that are no JSON object)
        if item.get("type", "message") == "message" and item.get("content") is None:
            raise APIError(400, "a message item needs its content", param=f"items.{i}.content",
                           code="invalid_value")  # fmt: skip
        if item.get("type") == "function_call" and not _json_object(item.get("arguments")):
            raise APIError(400, "a function_call's arguments must be the JSON text of an object",
                           param=f"items.{i}.arguments", code="invalid_value")  # fmt: skip
    return input_items(items)


def _json_object(text: Any) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, ValueError):
        return False


def _as_items(error: APIError) -> APIError:
    """`error` naming `items` where it names the `input` these items were checked as."""
    param = error.param and re.sub(r"^input(?=$|\.)", "items", error.param)
    message = re.sub(r"(?<![\w.])input(?=[.\s']|$)", "items", error.message)
    return APIError(error.status, message, param=param, code=error.code)


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
            raise APIError(400, "this server keeps no conversations (--conversations-store-size 0)")
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
        get(conversation_id)
        body = validated(UpdateConversation, await read_request_json(request))
        conversation = get(conversation_id)  # (again: it may be gone while the body came)
        conversation.metadata = checked_metadata(body.metadata)
        return conversation.body()

    @api.delete("/v1/conversations/{conversation_id}")
    async def delete_conversation(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        await no_body(request)
        get(conversation_id)
        store.delete(conversation_id)
        return {"id": conversation_id, "object": "conversation.deleted", "deleted": True}

    @api.get("/v1/conversations/{conversation_id}/items")
    async def list_items(conversation_id: str, request: Request) -> dict:
        """OpenAI's page of its items: `limit` (1-100, default 20), `order` (`desc`, the
        default, or `asc`), `after` (an item id)."""
        query = query_params(request, ("limit", "order", "after"))
        items = get(conversation_id).items
        return page([item.id for item in items], lambda i: json.loads(items[i].json), query)

    @api.post("/v1/conversations/{conversation_id}/items")
    async def create_items(conversation_id: str, request: Request) -> dict:
        query_params(request, ())
        get(conversation_id)
        body = validated(CreateItems, await read_request_json(request))
        items = checked_items(body.items)
        store.add(get(conversation_id).id, items)  # (again: it may be gone while the body came)
        return {"object": "list", "data": items, "first_id": items[0]["id"],
                "last_id": items[-1]["id"], "has_more": False}  # fmt: skip

    @api.get("/v1/conversations/{conversation_id}/items/{item_id}")
    async def retrieve_item(conversation_id: str, item_id: str, request: Request) -> dict:
        query_params(request, ())
        return store.item(get(conversation_id).id, item_id)

    @api.delete("/v1/conversations/{conversation_id}/items/{item_id}")
    async def delete_item(conversation_id: str, item_id: str, request: Request) -> dict:
        """Remove one item; the answer is the conversation (OpenAI's)."""
        query_params(request, ())
        await no_body(request)
        store.delete_item(get(conversation_id).id, item_id)
        return get(conversation_id).body()
