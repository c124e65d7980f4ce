"""Stored responses of /v1/responses, in memory: what `previous_response_id` continues, and what
`GET /v1/responses/{id}` returns and `DELETE` removes.

Each stored response keeps its Response object and its own turn of the conversation (its
input's chat messages, `instructions` left out as OpenAI's API leaves them out of what a later
response continues, then its answer's), both as JSON text: a reader gets new objects, so no
request can change what another stored, and the bound counts what is held. A response links to
the one it continued as (id, serial): a continuation walks the links back, and a link whose id
now names another response (deleted or dropped, then the id given again: a client's
`request_id` names its response) is broken, never followed to the wrong turns. At most
`capacity` responses and `max_bytes` of JSON are kept (`--responses-store-size`,
`--responses-store-mib`), the least recently used dropped first (created, read or continued
counts as use); nothing survives a restart. A background response is held here as a claimed
id while it runs (`responses_background.py` keeps the run) and stored when it ends, with its
stream's events where it was streamed.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """A stored response, as it was when a later one continued it."""

    response_id: str
    serial: int


@dataclass(frozen=True)
class StoredResponse:
    response_json: bytes  # the Response object as answered
    turn_json: bytes  # its turn's chat messages: its input's, then its answer's
    previous: Link | None  # the response it continued
    serial: int  # the store's count when it was stored
    items_json: bytes = b"[]"  # its input items, as GET .../input_items lists them
    events: tuple[str, ...] | None = None  # a background stream's SSE events, to replay
    events_bytes: int = 0  # their size in UTF-8

    @property
    def size(self) -> int:
        return (len(self.response_json) + len(self.turn_json) + len(self.items_json)
                + self.events_bytes)  # fmt: skip


class ResponseNotFound(KeyError):
    """`response_id` is not stored (never was, deleted, or dropped for room)."""

    def __init__(self, response_id: str, continued_by: str | None = None) -> None:
        super().__init__(response_id)
        self.response_id, self.continued_by = response_id, continued_by

    def __str__(self) -> str:
        if self.continued_by is None:
            return f"Response with id '{self.response_id}' not found."
        return (f"Response with id '{self.response_id}' (which '{self.continued_by}' continues) "
                "is no longer stored.")  # fmt: skip


class IdTaken(ValueError):
    """A stored or running response has the id already."""


class ResponseStore:
    def __init__(self, capacity: int, max_bytes: int) -> None:
        self.capacity, self.max_bytes = capacity, max_bytes  # capacity 0: nothing is stored
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()
        self._claimed: set[str] = set()  # ids of responses running, to be stored
        self._serial = 0
        self.num_bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def claim(self, response_id: str) -> None:
        """Hold `response_id` for a response about to run (`put` or `release` ends it)."""
        if response_id in self._items or response_id in self._claimed:
            raise IdTaken(f"a stored or running response has the id '{response_id}'")
        self._claimed.add(response_id)

    def release(self, response_id: str) -> None:
        self._claimed.discard(response_id)

    def put(self, response_id: str, response_json: bytes, turn: list[dict],
            previous: Link | None, items: list[dict] | None = None,
            events: tuple[str, ...] | None = None, events_bytes: int = 0) -> bool:  # fmt: skip
        """Keep a finished response; False where it alone is past `max_bytes` (not kept)."""
        self._claimed.discard(response_id)
        self._serial += 1
        stored = StoredResponse(response_json, json.dumps(turn).encode(), previous, self._serial,
                                json.dumps(items or []).encode(), events, events_bytes)  # fmt: skip
        if self.capacity == 0 or stored.size > self.max_bytes:
            return False
        self._drop(response_id)
        self._items[response_id] = stored
        self.num_bytes += stored.size
        while len(self._items) > self.capacity or self.num_bytes > self.max_bytes:
            self._drop(next(iter(self._items)))
        return True

    def get(self, response_id: str) -> StoredResponse:
        stored = self._items.get(response_id)
        if stored is None:
            raise ResponseNotFound(response_id)
        self._items.move_to_end(response_id)
        return stored

    def delete(self, response_id: str) -> None:
        if not self._drop(response_id):
            raise ResponseNotFound(response_id)

    def conversation(self, response_id: str) -> tuple[list[dict], Link]:
        """The chat messages of `response_id`'s conversation, oldest turn first (new objects),
        and the link a response continuing it keeps."""
        head = self.get(response_id)
        turns = [head.turn_json]
        link, continued_by = head.previous, response_id
        while link is not None:
            stored = self._items.get(link.response_id)
            if stored is None or stored.serial != link.serial:  # gone, or another by that id
                raise ResponseNotFound(link.response_id, continued_by)
            self._items.move_to_end(link.response_id)
            turns.append(stored.turn_json)
            continued_by = link.response_id
            link = stored.previous
        messages = [message for turn in reversed(turns) for message in json.loads(turn)]
        return messages, Link(response_id, head.serial)

    def _drop(self, response_id: str) -> bool:
        stored = self._items.pop(response_id, None)
        if stored is None:
            return False
        self.num_bytes -= stored.size
        return True
