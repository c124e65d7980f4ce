"""What a request's HTTP side tells its handler: the id the client names it by, and whether
the client is still there."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from starlette.requests import Request

T = TypeVar("T")


class ClientDisconnected(Exception):
    """The client went away before the response was ready."""


def given_request_id(request: Request, body_request_id: str | None) -> str | None:
    """What names a response, where the client names it: the body's `request_id`, else the
    `X-Request-Id` header (vLLM's), read as UTF-8 (Starlette decodes headers as latin-1)."""
    header = request.headers.get("x-request-id", "").encode("latin-1")
    return body_request_id or header.decode("utf-8", "replace") or None


async def until_disconnected(request: Request, work: Awaitable[T]) -> T:
    """Await `work`, or raise ClientDisconnected (cancelling it) if the client goes away first."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_wait_disconnect(request))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        raise ClientDisconnected()
    finally:
        for t in (task, watcher):
            if not t.done():
                t.cancel()


async def _wait_disconnect(request: Request) -> None:
    # The body has been read, so the next ASGI message is the disconnect (uvicorn sends it when
    # the connection closes).
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return
