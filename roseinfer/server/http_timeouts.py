"""uvicorn's h11 protocol with a deadline for each request's head.

uvicorn closes a keep-alive connection that stays silent after a response, but not one that
opens and sends nothing, or sends a request head a byte at a time: each such connection holds a
socket for as long as its client likes, and enough of them (one slow client opening many)
leave no file descriptors for anyone else. Here a connection whose request head is not complete
within `timeout` seconds of the first byte (or of connecting) is closed. The body's deadline is
`jsonbody.read_request_json`'s (a 408).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def h11_with_head_timeout(timeout: float) -> type[H11Protocol]:
    """uvicorn's `H11Protocol`, closing a connection whose request head takes longer than
    `timeout` seconds."""

    class H11HeadTimeout(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_watch()
            super().connection_lost(exc)

        def _watch_head(self) -> None:
            """A deadline while the client owes a request head (h11: their state is IDLE, no
            request of theirs under way); none once it has come."""
            if self.conn.their_state is not h11.IDLE:
                self._stop_watch()
            elif self._head_timer is None:
                self._head_timer = self.loop.call_later(timeout, self._head_late)

        def _stop_watch(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and (
                self.cycle is None or self.cycle.response_complete
            ):
                self.transport.close()

    return H11HeadTimeout
