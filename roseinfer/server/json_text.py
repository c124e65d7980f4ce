"""JSON as the server writes it: compact, UTF-8 as is, no NaN; large responses a piece at a
time (`dumps_in_pieces`), parts written once spliced in as text (`JsonText`)."""

from __future__ import annotations

import json
from typing import Any


def dumps(obj: Any) -> str:
    """JSON as Starlette's JSONResponse writes it (compact, UTF-8 as is, no NaN)."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


PIECE_ITEMS = 256  # list items a piece of `dumps_in_pieces`: logprobs of 256 positions


class JsonText(str):
    """Text that is JSON already: `dumps_in_pieces` puts it in as it is, as the object itself
    or a value of a dict with string keys (in a list it would be written as a string). What a
    response writes of its prompt, written once for its n choices."""


def dumps_in_pieces(obj: Any) -> str:
    """`dumps(obj)`, the same text, written in calls of at most PIECE_ITEMS items of a list:
    the C encoder holds the GIL for a whole call, and one choice with a 400-word prompt's
    logprobs (3.4 MB) held the event loop and the engine loop ~66 ms each time either needed
    the GIL back; a short request beside it waited up to 1.0-1.3 s in all (BENCHMARKS.md,
    session 49). Dicts with string keys are written key by key, long lists a slice at a time,
    `JsonText` as it is."""
    if isinstance(obj, JsonText):
        return obj
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return "{" + ",".join(f"{dumps(k)}:{dumps_in_pieces(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, list) and len(obj) > PIECE_ITEMS:
        pieces = (dumps(obj[i : i + PIECE_ITEMS])[1:-1] for i in range(0, len(obj), PIECE_ITEMS))
        return "[" + ",".join(pieces) + "]"
    return dumps(obj)


def with_json_list(envelope: dict, key: str, items: list[str]) -> str:
    """`envelope` as JSON with `key` the list of `items`, each JSON already."""
    return dumps_in_pieces({**envelope, key: JsonText("[" + ",".join(items) + "]")})


def joined_list(head: str, tail: str) -> JsonText:
    """The JSON list of `head`'s items then `tail`'s (both JSON lists)."""
    return JsonText("[" + ",".join(part[1:-1] for part in (head, tail) if part != "[]") + "]")
