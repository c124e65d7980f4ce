"""--request-timeout through a real server and raw sockets: a client that never finishes its
request head is disconnected, one that never finishes its body gets a 408 and the connection
closed, one that trickles a body after its response or never reads its response is cut off,
and none holds up a request sent meanwhile. Deadlines are asserted with seconds to spare (a
loaded 2-core machine)."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from conftest import serve_in_process

from roseinfer.server.config import ServerConfig

TIMEOUT = 1.0


@pytest.fixture(scope="module")
def url(tiny_model_dir):
    config = ServerConfig(request_timeout=TIMEOUT)
    with serve_in_process(tiny_model_dir("llama"), server_config=config) as (_, base):
        yield base


def connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def read_to_close(sock: socket.socket, seconds: float) -> bytes:
    """What the server sends until it closes `sock` (a reset counts as closed); a timeout
    past `seconds`."""
    sock.settimeout(seconds)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


def trickle(sock: socket.socket, data: bytes, seconds: float) -> None:
    """`data` a byte at a time over `seconds` (stopping where the server closed first)."""
    for byte in data:
        time.sleep(seconds / len(data))
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return


def test_a_silent_or_slow_head_is_disconnected(url):
    silent = connect(url)
    slow = connect(url)
    start = time.monotonic()
    slow.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")  # the head, never ended
    trickle(slow, b"X-Slow: 1", TIMEOUT * 0.8)  # a byte now and then buys no time
    read_to_close(slow, 10)
    assert time.monotonic() - start < TIMEOUT + 3
    read_to_close(silent, 10)
    assert time.monotonic() - start < TIMEOUT + 3
    # meanwhile, and after, a request sent in time is served
    r = httpx.post(url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 2}, timeout=30)
    assert r.status_code == 200


def test_a_slow_body_is_a_408_and_the_connection_closes(url):
    sock = connect(url)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nContent-Length: 100\r\n\r\n{\"prompt\": ")  # fmt: skip
    answer = read_to_close(sock, TIMEOUT + 10)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"connection: close" in answer.lower() and b"--request-timeout" in answer


def test_a_body_trickled_after_its_response_is_cut_off(url):
    """/health reads no body: its answer goes out at once, and the client's bytes after it
    buy no time (uvicorn's keep-alive deadline restarts on every byte)."""
    sock = connect(url)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    start = time.monotonic()
    trickle(sock, b"1\r\nx\r\n" * 3, TIMEOUT * 2)
    assert read_to_close(sock, 10).startswith(b"HTTP/1.1 200")
    assert time.monotonic() - start < TIMEOUT * 2 + 3


def test_a_client_that_never_reads_its_stream_is_cut_off(url):
    """A stream far larger than the socket buffers, never read: once the server cannot write
    for the deadline it aborts the connection, where it had held the handler and megabytes of
    unsent chunks for as long as the client liked."""
    body = json.dumps({"prompt": "Hi", "max_tokens": 200, "n": 64, "logprobs": 20,
                       "stream": True, "ignore_eos": True}).encode()  # fmt: skip
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window
    host, port = url.removeprefix("http://").split(":")
    sock.connect((host, int(port)))
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
    time.sleep(TIMEOUT + 5)  # not reading: the server's buffers fill, then its deadline passes
    # what was buffered, then the end (a connection still held would stream on to its end,
    # `data: [DONE]`, then wait: a timeout here)
    answer = read_to_close(sock, 20)
    assert answer.startswith(b"HTTP/1.1 200") and b"data: [DONE]" not in answer[-100:]


def test_a_keep_alive_connection_gets_the_deadline_for_each_head(url):
    sock = connect(url)
    body = b'{"prompt": "Hi", "max_tokens": 1}'
    head = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))  # fmt: skip
    sock.sendall(head + body)
    sock.settimeout(30)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    start = time.monotonic()
    sock.sendall(head[:20])  # the next request's head, begun and never ended
    read_to_close(sock, 10)
    assert time.monotonic() - start < TIMEOUT + 3


def test_the_timeout_is_checked_and_zero_is_none():
    with pytest.raises(ValueError, match="--request-timeout must be"):
        ServerConfig(request_timeout=-1)
    from roseinfer.server.cli import uvicorn_config

    assert uvicorn_config(None, "127.0.0.1", 0, "warning", 0).http == "h11"  # type: ignore[arg-type]
