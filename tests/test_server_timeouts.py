"""--request-timeout through a real server and raw sockets: a client that never finishes its
request head is disconnected, one that never finishes its body gets a 408, and neither holds
up a request sent meanwhile."""

from __future__ import annotations

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


def closed_within(sock: socket.socket, seconds: float) -> float:
    """Seconds until the server closed `sock` (reading b""), failing past `seconds`."""
    start = time.monotonic()
    sock.settimeout(seconds)
    while sock.recv(4096):
        pass
    return time.monotonic() - start


def test_a_silent_or_slow_head_is_disconnected(url):
    silent = connect(url)
    slow = connect(url)
    slow.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n")  # the head, never ended
    start = time.monotonic()
    for _ in range(3):  # a byte now and then does not buy more time
        time.sleep(TIMEOUT / 4)
        slow.sendall(b"X")
    assert closed_within(slow, 5) + time.monotonic() - start < TIMEOUT + 2
    assert closed_within(silent, 5) < TIMEOUT + 2
    # meanwhile, and after, a request sent in time is served
    r = httpx.post(url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 2}, timeout=30)
    assert r.status_code == 200


def test_a_slow_body_is_a_408(url):
    sock = connect(url)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nContent-Length: 100\r\n\r\n{\"prompt\": ")  # fmt: skip
    sock.settimeout(TIMEOUT + 5)
    answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"request_timeout" in answer and b"--request-timeout" in answer


def test_a_keep_alive_connection_gets_the_deadline_for_each_head(url):
    sock = connect(url)
    body = b'{"prompt": "Hi", "max_tokens": 1}'
    head = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))  # fmt: skip
    sock.sendall(head + body)
    sock.settimeout(30)
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    sock.sendall(head[:20])  # the next request's head, begun and never ended
    assert closed_within(sock, 5) < TIMEOUT + 2


def test_the_timeout_is_checked_and_zero_is_none():
    with pytest.raises(ValueError, match="--request-timeout must be"):
        ServerConfig(request_timeout=-1)
    from roseinfer.server.cli import uvicorn_config

    assert uvicorn_config(None, "127.0.0.1", 0, "warning", 0).http == "h11"  # type: ignore[arg-type]
