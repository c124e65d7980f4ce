"""Pure ASGI middleware (streaming-safe): a request's `X-Request-Id` sent back; request bodies
over a size limit refused before they are parsed.

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


class RequestIdMiddleware:
    """A request's `X-Request-Id` header sent back on its response (as vLLM's
    `--enable-request-id-headers`: a gateway matches its logs by it); the OpenAI endpoints also
    name the response by it (`chatcmpl-<id>`) where the body gives no `request_id`. A request
    without the header passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = None
        if scope["type"] == "http":
            given = next((v for k, v in scope.get("headers", ()) if k == b"x-request-id"), None)
        if not given:
            await self.app(scope, receive, send)
            return

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", ()), (b"x-request-id", given)]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_id)
