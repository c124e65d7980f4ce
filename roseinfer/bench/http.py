"""A small asyncio HTTP/1.1 client for the load generator: keep-alive connections, streamed bodies.

The load client shares the machine with the server it measures, so its CPU per streamed chunk
is taken from the server. httpx spends ~100 µs per SSE chunk (0.13-0.15 cores at 32 streams,
~1,300 chunks/s); this client reads the same stream for ~40 µs (0.05-0.06 cores). It speaks just
what `bench serve` needs: one request at a time per connection, `Content-Length` and chunked
bodies, `http://` and `https://`; no proxies, redirects or compression.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

__all__ = ["ConnectionPool", "HTTPError", "Response"]

_MAX_HEAD = 64 * 1024


class HTTPError(Exception):
    """The server broke the protocol or closed the connection early."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        self.writer.close()


class Response:
    """Status and headers (lower-case names); the body is read once, with `chunks()` or `read()`."""

    def __init__(self, status: int, headers: dict[str, str], conn: _Connection) -> None:
        self.status = status
        self.headers = headers
        self._conn = conn
        self.reusable = False  # set once the whole body was read on a kept-alive connection

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives (transfer chunks, or reads of a `Content-Length` body)."""
        reader = self._conn.reader
        keep_alive = self.headers.get("connection", "").lower() != "close"
        if self.status in (204, 304) or 100 <= self.status < 200:
            pass  # no body
        elif self.headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                line = await reader.readuntil(b"\r\n")
                try:
                    size = int(line.split(b";", 1)[0], 16)
                except ValueError:
                    raise HTTPError(f"bad chunk size line {line[:40]!r}") from None
                if size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                        pass
                    break
                data = await reader.readexactly(size + 2)
                yield data[:-2]
        elif "content-length" in self.headers:
            left = int(self.headers["content-length"])
            while left:
                data = await reader.read(min(left, 1 << 16))
                if not data:
                    raise HTTPError("connection closed before the end of the body")
                left -= len(data)
                yield data
        else:  # the body ends when the server closes the connection
            while data := await reader.read(1 << 16):
                yield data
            keep_alive = False
        self.reusable = keep_alive

    async def read(self) -> bytes:
        return b"".join([c async for c in self.chunks()])

    async def lines(self) -> AsyncIterator[bytes]:
        """The body split at newlines (each line without its line ending), e.g. an SSE stream."""
        pending = b""
        async for chunk in self.chunks():
            pending += chunk
            if b"\n" not in chunk:
                continue
            *done, pending = pending.split(b"\n")
            for line in done:
                yield line.rstrip(b"\r")
        if pending:
            yield pending.rstrip(b"\r")


class ConnectionPool:
    """Keep-alive connections to one `http(s)://host:port`; a connection serves one request at a time."""

    def __init__(self, base_url: str, connect_timeout: float = 30.0) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.ssl = ssl.create_default_context() if url.scheme == "https" else None
        default_port = self.port == (443 if url.scheme == "https" else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.host_header = host if default_port else f"{host}:{self.port}"
        self.connect_timeout = connect_timeout
        self._idle: list[_Connection] = []

    async def _connect(self) -> _Connection:
        async with asyncio.timeout(self.connect_timeout):
            reader, writer = await asyncio.open_connection(
                self.host, self.port, ssl=self.ssl, limit=1 << 20
            )
        return _Connection(reader, writer)

    @asynccontextmanager
    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> AsyncIterator[Response]:
        """Send a request and yield its response; read the body inside the `async with`."""
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host_header}"]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body or method in ("POST", "PUT", "PATCH"):
            head.append(f"Content-Length: {len(body)}")
        message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        resp = None
        # A kept-alive connection may have been closed by the server while idle: if it fails
        # before any byte of the response, retry once on a new connection.
        for reused in (True, False):
            if reused and self._idle:
                conn = self._idle.pop()
            else:
                reused, conn = False, await self._connect()
            try:
                conn.writer.write(message)
                resp = await self._read_head(conn)
                break
            except (ConnectionError, asyncio.IncompleteReadError):
                conn.close()
                if not reused:
                    raise
            except BaseException:  # a bad head, a timeout, a cancellation: don't leak the socket
                conn.close()
                raise
        assert resp is not None
        try:
            yield resp
        finally:
            if resp.reusable:
                self._idle.append(conn)
            else:
                conn.close()

    async def _read_head(self, conn: _Connection) -> Response:
        try:
            raw = await conn.reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise HTTPError("response head too large") from None
        if len(raw) > _MAX_HEAD:
            raise HTTPError("response head too large")
        status_line, *header_lines = raw[:-4].decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HTTPError(f"bad status line {status_line[:80]!r}")
        headers = {}
        for line in header_lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        return Response(int(parts[1]), headers, conn)

    async def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()
