"""uvicorn's h11 protocol with deadlines on what a client owes a connection.

uvicorn closes a keep-alive connection that stays silent after a response, but not one that
opens and sends nothing, sends a request head a byte at a time, trickles a body nobody reads
after its response went out, or never reads its response: each such connection holds a socket
(and a response's unsent bytes) for as long as its client likes, and enough of them (one slow
client opening many) leave no file descriptors for anyone else. Here, with `timeout` seconds:

- a request head not complete within `timeout` of its first byte (or of connecting), or a
  body still trickling `timeout` after its response was sent, closes the connection;
- a response whose client has not read enough to take more for `timeout` (the socket's buffer
  full) aborts it.

The deadline of a body the server reads is `jsonbody.read_request_json`'s (a 408).
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


def h11_with_deadlines(timeout: float) -> type[H11Protocol]:
    """uvicorn's `H11Protocol` with the deadlines above, of `timeout` seconds."""

    class H11WithDeadlines(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None
        _write_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch_head()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_watch()
            if self._write_timer is not None:
                self._write_timer.cancel()
            super().connection_lost(exc)

        def pause_writing(self) -> None:  # the client reads no more: its buffer is full
            super().pause_writing()
            if self._write_timer is None:
                self._write_timer = self.loop.call_later(timeout, self.transport.abort)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._write_timer is not None:
                self._write_timer.cancel()
                self._write_timer = None

        def _idle(self) -> bool:
            """The client owes a request head (h11: their state IDLE, no request under way),
            or sends a body after its response went out (nobody will read it)."""
            state, cycle = self.conn.their_state, self.cycle
            if state is h11.IDLE:
                return cycle is None or cycle.response_complete
            return state is h11.SEND_BODY and cycle is not None and cycle.response_complete

        def _watch_head(self) -> None:
            """A deadline while the connection is `_idle`; none once a request has come."""
            if not self._idle():
                self._stop_watch()
            elif self._head_timer is None:
                self._head_timer = self.loop.call_later(timeout, self._head_late)

        def _stop_watch(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self._idle():
                self.transport.close()

    return H11WithDeadlines
