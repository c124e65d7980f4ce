"""Request bodies as JSON, read one way for every endpoint (`read_json`): what no field could
read as sent (a lone UTF-16 surrogate, a key given twice, NaN or Infinity) is refused here, as
a 400 naming where it is, before anything reads it.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
from typing import Any

from starlette.requests import Request

from roseinfer.server.errors import APIError

_SURROGATE = re.compile("[\ud800-\udfff]")


async def read_request_json(request: Request) -> Any:
    """The request's body as JSON (`read_json`), once its Content-Encoding is one this server
    reads (none: a compressed body had been a 400 saying it was not valid JSON) and its
    Content-Type says JSON (`application/json`, or a `+json` type). Another type, or none, is a
    415: `text/plain`, form types and a typeless body are what a page of another origin may
    send without asking (CORS's "simple requests"), so a server without an API key would
    otherwise run whatever any page a user opened posted to it. (FastAPI, and so vLLM, reads a
    body without a type as JSON and answers others with a 422: stricter here on purpose.)"""
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise APIError(415, f"Content-Encoding {encoding!r} is not supported: send the body "
                            "uncompressed", code="unsupported_encoding")  # fmt: skip
    timeout = request.app.state.server_config.request_timeout or None
    try:  # the size limit applies while this reads
        body = await asyncio.wait_for(request.body(), timeout)
    except TimeoutError:  # a client sending its body a byte at a time holds a handler
        raise APIError(
            408,
            f"the request body did not arrive within {timeout:g} s (--request-timeout)",
            code="request_timeout",
            headers={"Connection": "close"},  # the client may still be sending: as RFC 9110
        ) from None
    given = request.headers.get("content-type")
    if body and not is_json_type(given):
        raise APIError(415, f"Content-Type {given!r} is not JSON: send the body as "
                            "application/json (curl: -H 'Content-Type: application/json')"
                       if given is not None else "the request has a body but no Content-Type: "
                            "send it as application/json",
                       code="unsupported_media_type")  # fmt: skip
    if len(body) > OFF_LOOP_BYTES:  # a big body's parse holds the event loop no longer
        return await asyncio.to_thread(read_json, body)
    return read_json(body)


# Bodies above this are read on a worker thread: a 4 MiB body took 0.1-0.5 s to parse.
OFF_LOOP_BYTES = 64 * 1024


def is_json_type(content_type: str | None) -> bool:
    """Whether a Content-Type header names JSON: application/json or application/<x>+json,
    parameters (charset) aside."""
    if content_type is None:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def read_json(raw: bytes) -> Any:
    """The parsed body (empty: `{}`), or a 400: not JSON, or a value no field can read as sent
    (`_first_unreadable`)."""
    constants: list[str] = []  # NaN, Infinity, -Infinity: found, then located

    def constant(name: str) -> float:
        constants.append(name)
        return float(name)

    try:
        data = json.loads(raw or b"{}", object_pairs_hook=_object, parse_constant=constant)
    except ValueError as e:  # also bad UTF-8
        raise APIError(400, f"request body is not valid JSON: {e}", code="invalid_json") from None
    except RecursionError:
        raise APIError(400, "request body nests objects and arrays deeper than this server reads "
                            f"(about {sys.getrecursionlimit()} levels)",
                       code="invalid_json") from None  # fmt: skip
    bad = _first_unreadable(data, bool(constants))
    if bad is not None:
        path, why = bad
        raise APIError(400, f"{path or 'the request body'}: {why}", param=path or None,
                       code="invalid_value")  # fmt: skip
    return data


class _Repeated(dict):
    """An object in which a key came more than once (`repeated`, the first such)."""

    repeated: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; `_Repeated` where a key came twice (json.loads keeps the last
    value: a field whose first value would be dropped unread)."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    repeated = _Repeated(out)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            repeated.repeated = key
            break
        seen.add(key)
    return repeated


def _first_unreadable(data: Any, non_finite: bool) -> tuple[str, str] | None:
    """(dotted path, why) of the first value no field could read as sent, or None. The path
    names fields as pydantic's errors do (`messages.0.content`, "" for the body itself):
    - a string or key holding a lone UTF-16 surrogate: JSON's `\\uXXXX` can spell one
      (`"\\ud800"`), and Python decodes it into a `str` that cannot be encoded to UTF-8, so a
      tokenizer, a chat template or the response that echoes it would fail mid-request (a bad
      key is named backslash-escaped: a param must be valid Unicode);
    - a key given twice in one object (the earlier value would be dropped unread);
    - NaN or Infinity (`non_finite`: the parse met one; JSON has no such numbers, and Python's
      json reads them as floats, which a schema would take as written; a number too large for
      a double is refused by the field or schema that reads it).
    Iterative: json.loads nests as deep as the recursion limit allows."""
    kinds = (str, dict, list, float) if non_finite else (str, dict, list)
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return path, SURROGATE_MESSAGE
        elif isinstance(value, float):
            if not math.isfinite(value):
                return path, "NaN and Infinity are not JSON numbers"
        elif isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    escaped = key.encode("utf-8", "backslashreplace").decode("utf-8")
                    return (f"{path}.{escaped}" if path else escaped), SURROGATE_MESSAGE
                if isinstance(item, kinds):
                    stack.append((item, f"{path}.{key}" if path else key))
            if isinstance(value, _Repeated):  # its keys are valid Unicode: checked above
                key = value.repeated
                return (f"{path}.{key}" if path else key), "the key is given more than once"
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, kinds):
                    stack.append((item, f"{path}.{i}" if path else str(i)))
    return None


SURROGATE_MESSAGE = (
    "a string holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not "
    "valid Unicode"
)
