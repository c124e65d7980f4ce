"""The load client's HTTP/1.1 layer against a scripted raw-socket server: framing, reuse, failures."""

from __future__ import annotations

import asyncio
import json

import pytest

from roseinfer.bench import http as http_client
from roseinfer.bench.http import ConnectionPool, HTTPError
from roseinfer.bench.serve_client import ServeConfig, send_request
from roseinfer.bench.serve_prompts import PromptSpec


class ScriptedServer:
    """Answers each request on a connection with the next reply: a list of byte strings written
    one by one (with a short pause, so they arrive as separate reads); "close", as the reply or
    as its last piece, hangs up; a number as a piece is a pause of that many seconds."""

    def __init__(self, replies: list) -> None:
        self.replies = list(replies)
        self.requests: list[bytes] = []
        self.connections = 0

    async def __aenter__(self) -> ScriptedServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                self.requests.append(head + await reader.readexactly(length))
                reply = self.replies.pop(0)
                if reply == "close":
                    break
                for piece in reply:
                    if piece == "close":
                        writer.close()
                        return
                    if isinstance(piece, float):
                        await asyncio.sleep(piece)
                        continue
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0.002)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client hung up, or the test is over
        writer.close()


def chunked(*pieces: bytes, head: bytes = b"") -> list[bytes]:
    out = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + head]
    out[0] += b"Transfer-Encoding: chunked\r\n\r\n"
    out += [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces]
    return out + [b"0\r\n\r\n"]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


def test_chunked_body_lines_and_connection_reuse():
    # an SSE stream whose lines and chunk framing straddle the server's writes
    reply = chunked(b"data: 1\n\nda", b"ta: 2\r\n\r\n", b"data: 3")
    reply[1:2] = [reply[1][:2], reply[1][2:]]  # the chunk-size line split across two writes

    async def main():
        async with ScriptedServer([reply, chunked(b"x")]) as srv:
            pool = ConnectionPool(srv.url + "/v1")
            async with pool.request("POST", "/v1/completions", b'{"a": 1}', {"X-Test": "1"}) as r:
                assert r.status == 200 and r.headers["content-type"] == "text/event-stream"
                lines = [line async for line in r.lines()]
            async with pool.request("GET", "/again") as r:
                assert await r.read() == b"x"
            await pool.close()
            return lines, srv

    lines, srv = run(main())
    assert lines == [b"data: 1", b"", b"data: 2", b"", b"data: 3"]
    assert srv.connections == 1  # the second request reused the kept-alive connection
    first = srv.requests[0]
    assert first.startswith(b"POST /v1/completions HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{srv.port}\r\n".encode() in first
    assert b"X-Test: 1\r\n" in first and b"Content-Length: 8\r\n" in first
    assert first.endswith(b'\r\n\r\n{"a": 1}')
    assert srv.requests[1].startswith(b"GET /again HTTP/1.1\r\n")


def test_content_length_and_close_delimited_bodies():
    error = b'{"error": "bad"}'
    replies = [
        [b"HTTP/1.1 400 Bad Request\r\nContent-Length: %d\r\n\r\n" % len(error), error],
        [b"HTTP/1.1 204 No Content\r\n\r\n"],
        [b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", b"until ", b"the end"],
    ]

    async def main():
        async with ScriptedServer(replies) as srv:
            pool = ConnectionPool(srv.url)
            got = []
            for _ in range(3):
                async with pool.request("GET", "/") as r:
                    got.append((r.status, await r.read()))
            await pool.close()
            return got

    assert run(main()) == [(400, error), (204, b""), (200, b"until the end")]


def test_stale_kept_alive_connection_is_retried_on_a_new_one():
    async def main():
        # the server hangs up instead of answering the second request on the first connection
        async with ScriptedServer([chunked(b"a"), "close", chunked(b"b")]) as srv:
            pool = ConnectionPool(srv.url)
            bodies = []
            for _ in range(2):
                async with pool.request("GET", "/") as r:
                    bodies.append(await r.read())
            await pool.close()
            return bodies, srv.connections

    assert run(main()) == ([b"a", b"b"], 2)


def test_protocol_errors_raise():
    async def fetch(reply: list[bytes]) -> bytes:
        async with ScriptedServer([[*reply, "close"]]) as srv:
            pool = ConnectionPool(srv.url)
            try:
                async with pool.request("GET", "/") as r:
                    return await r.read()
            finally:
                await pool.close()

    with pytest.raises(HTTPError, match="bad status line"):
        run(fetch([b"SPDY/3 200 OK\r\n\r\n"]))
    with pytest.raises(HTTPError, match="bad chunk size"):
        run(fetch([b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]))
    with pytest.raises(HTTPError, match="before the end of the body"):
        run(fetch([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"]))
    with pytest.raises(asyncio.IncompleteReadError):  # hung up in the middle of a chunk
        run(fetch(chunked(b"0123456789")[:1] + [b"a\r\n01234"]))
    with pytest.raises(ValueError, match="not an http"):
        ConnectionPool("ftp://example.com/")


def test_send_request_reports_stream_failures_without_raising():
    """A stream cut off before [DONE], a server error event, and a timeout are failed results."""
    event = json.dumps({"choices": [{"index": 0, "text": " hi", "finish_reason": None}]}).encode()
    error = json.dumps({"error": {"message": "boom"}}).encode()
    cut = chunked(b"data: " + event + b"\n\n")[:-1] + ["close"]  # hangs up before the last chunk
    replies = [cut, chunked(b"data: " + error + b"\n\n"), [b"HTTP/1.1 200 OK\r\n", 5.0]]

    async def main():
        async with ScriptedServer(replies) as srv:
            pool = ConnectionPool(srv.url + "/v1")
            cfg = ServeConfig(base_url=srv.url + "/v1", model="m", timeout=0.5)
            spec = PromptSpec("hello", 1, 4)
            results = [await send_request(pool, cfg, spec) for _ in range(3)]
            await pool.close()
            return results

    cut_off, server_error, timed_out = run(main())
    assert not cut_off.success and cut_off.text == " hi"
    assert "IncompleteReadError" in cut_off.error or "without [DONE]" in cut_off.error
    assert not server_error.success and "boom" in server_error.error
    assert not timed_out.success and timed_out.error == "timed out after 0.5 s"


def test_a_request_cancelled_before_its_response_closes_its_connection(monkeypatch):
    closes = []
    monkeypatch.setattr(http_client._Connection, "close", lambda self: closes.append(self))

    async def main():
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read()  # never answers

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        pool = ConnectionPool(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2), pool.request("GET", "/"):
                pass
        server.close()
        return pool._idle

    assert run(main()) == [] and len(closes) == 1  # closed at once, not left to the GC
