"""The API key check (`--api-key`): one function for the protected routes and for the unknown
paths under `/v1` (which answer 401 before 404 without a key, as vLLM's: a client without one
learns nothing of which routes exist)."""

from __future__ import annotations

import secrets

from starlette.requests import Request

from roseinfer.server.errors import APIError


def api_key_error(request: Request, keys: tuple[str, ...]) -> APIError | None:
    """The 401 for a request without one of `keys` as its bearer token, or None (no keys: the
    API is open)."""
    if not keys:
        return None
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = token.strip().encode()
    # every key compared, in constant time each: no early exit that times which one matched
    matches = [secrets.compare_digest(given, key.encode()) for key in keys]
    if scheme.lower() != "bearer" or not any(matches):
        return APIError(401, "invalid or missing API key: send 'Authorization: Bearer <key>'",
                        code="invalid_api_key")  # fmt: skip
    return None
