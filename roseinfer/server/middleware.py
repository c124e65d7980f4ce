"""Refuse request bodies over a size limit before they are parsed (pure ASGI, streaming-safe).

A declared `Content-Length` over the limit is answered 413 before the body is read at all; a
body without one (chunked) is counted while it is read, and reading fails with a 413 as soon
as it passes the limit, so an oversized body is never held in memory or parsed.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from roseinfer.server.errors import APIError


def _too_large(limit: int) -> APIError:
    return APIError(
        413, f"request body is larger than the limit of {limit} bytes", code="request_too_large"
    )


class BodySizeLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.max_bytes:
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                if not value.isdigit():
                    await APIError(400, "invalid Content-Length header").response()(
                        scope, receive, send
                    )
                    return
                if int(value) > limit:
                    await _too_large(limit).response()(scope, receive, send)
                    return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _too_large(limit)  # answered by the app's APIError handler
            return message

        await self.app(scope, limited_receive, send)
