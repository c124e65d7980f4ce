"""Request bodies as JSON, read one way for every endpoint (`read_json`).

JSON's `\\uXXXX` escapes can spell a lone UTF-16 surrogate (`"\\ud800"`), which Python's json
decodes into a `str` that is not valid Unicode: it cannot be encoded to UTF-8, so a tokenizer,
a chat template or the response that echoes it back would fail mid-request (a 500, or a stream
cut short). Such a string is refused here, as a 400 naming where it is, before anything reads it.
"""

from __future__ import annotations

import json
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
    body = await request.body()  # the size limit applies while this reads
    given = request.headers.get("content-type")
    if body and not is_json_type(given):
        raise APIError(415, f"Content-Type {given!r} is not JSON: send the body as "
                            "application/json (curl: -H 'Content-Type: application/json')"
                       if given is not None else "the request has a body but no Content-Type: "
                            "send it as application/json",
                       code="unsupported_media_type")  # fmt: skip
    return read_json(body)


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
    """The parsed body (empty: `{}`), or a 400: not JSON, or a string (a key included) that is
    not valid Unicode."""
    try:
        # Python's json, like OpenAI's server, takes NaN/Infinity (SamplingParams refuses them,
        # naming the field) and integers of any size (a seed too large gets a 400).
        data = json.loads(raw or b"{}")
    except ValueError as e:  # also bad UTF-8
        raise APIError(400, f"request body is not valid JSON: {e}", code="invalid_json") from None
    except RecursionError:
        raise APIError(400, "request body nests objects and arrays deeper than this server reads "
                            f"(about {sys.getrecursionlimit()} levels)",
                       code="invalid_json") from None  # fmt: skip
    bad = _first_surrogate(data)
    if bad is not None:
        raise APIError(400, f"{bad or 'the request body'}: a string holds a lone UTF-16 surrogate "
                            "(an unpaired \\ud800-\\udfff escape), which is not valid Unicode",
                       param=bad or None, code="invalid_value")  # fmt: skip
    return data


def _first_surrogate(data: Any) -> str | None:
    """The dotted path (`messages.0.content`, list indices as numbers, as pydantic's errors
    name fields) of a string holding a lone surrogate, or None ("" for the body itself). A bad
    key is named by its path with the key backslash-escaped (a param must be valid Unicode).
    Iterative: json.loads nests as deep as the recursion limit allows."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return path
        elif isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    escaped = key.encode("utf-8", "backslashreplace").decode("utf-8")
                    return f"{path}.{escaped}" if path else escaped
                if isinstance(item, str | dict | list):
                    stack.append((item, f"{path}.{key}" if path else key))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str | dict | list):
                    stack.append((item, f"{path}.{i}" if path else str(i)))
    return None
