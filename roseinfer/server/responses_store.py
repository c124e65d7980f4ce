"""Stored responses of /v1/responses, in memory: what `previous_response_id` continues, and what
`GET /v1/responses/{id}` returns and `DELETE` removes.

Each stored response keeps its Response object and its own turn of the conversation, as chat
messages (its input, `instructions` left out as OpenAI's API leaves them out of what a later
response continues, then its answer), with the id of the response it continued: a
continuation walks that chain back. At most `capacity` responses are kept (`--responses-store-
size`); past it the least recently used goes (created, read or continued counts as use), so a
conversation in use keeps its turns. Nothing survives a restart. An id can come back (a
client's `request_id` names the response): a chain only follows a link to a response stored
before the one that continued it, so a later response under an old id is never taken for it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class StoredResponse:
    response: dict  # the Response object as answered
    previous_id: str | None  # the response this one continued
    messages: tuple[dict, ...]  # its turn: its input's chat messages, then its answer's
    serial: int = 0  # the store's count when it was stored (the order of storing)


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


class ResponseStore:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity  # 0: nothing is stored
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()
        self._serial = 0

    def __len__(self) -> int:
        return len(self._items)

    def put(self, response_id: str, response: dict, previous_id: str | None,
            messages: tuple[dict, ...]) -> None:  # fmt: skip
        if self.capacity == 0:
            return
        self._serial += 1
        self._items[response_id] = StoredResponse(response, previous_id, messages, self._serial)
        self._items.move_to_end(response_id)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def get(self, response_id: str) -> StoredResponse:
        stored = self._items.get(response_id)
        if stored is None:
            raise ResponseNotFound(response_id)
        self._items.move_to_end(response_id)
        return stored

    def delete(self, response_id: str) -> None:
        if self._items.pop(response_id, None) is None:
            raise ResponseNotFound(response_id)

    def conversation(self, response_id: str) -> list[dict]:
        """The chat messages of `response_id`'s conversation, oldest turn first."""
        turns = []
        next_id: str | None = response_id
        continued_by, before = None, self._serial + 1
        while next_id is not None:
            stored = self._items.get(next_id)
            if stored is None or stored.serial >= before:  # gone, or a later one of that id
                raise ResponseNotFound(next_id, continued_by)
            self._items.move_to_end(next_id)
            turns.append(stored.messages)
            continued_by, next_id, before = next_id, stored.previous_id, stored.serial
        return [message for turn in reversed(turns) for message in turn]
