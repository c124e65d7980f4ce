"""A stream its client never reads, with --request-timeout 1: how many bytes arrive before the
server gives up, and whether the stream got to its end (`data: [DONE]`). n = 64 choices x 200
tokens x 20 logprobs each, far past the socket buffers; the client's receive buffer 4 KiB.

    .venv/bin/python docs/bench/session52/limits/unread_stream.py
"""

import json
import socket
import sys
import tempfile
import time

sys.path.insert(0, "tests")
from conftest import make_tiny_model, serve_in_process  # noqa: E402

from roseinfer.server.config import ServerConfig  # noqa: E402

path = make_tiny_model("llama", tempfile.mkdtemp() + "/m")
with serve_in_process(path, server_config=ServerConfig(request_timeout=1.0)) as (_, url):
    body = json.dumps({"prompt": "Hi", "max_tokens": 200, "n": 64, "logprobs": 20,
                       "stream": True, "ignore_eos": True}).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    host, port = url.removeprefix("http://").split(":")
    sock.connect((host, int(port)))
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(6)  # not reading
    sock.settimeout(20)
    received = b""
    try:
        while chunk := sock.recv(1 << 20):
            received += chunk
        end = "closed by the server"
    except ConnectionResetError:
        end = "reset by the server"
    except TimeoutError:
        end = "still open after 20 s"
    print(f"{len(received):,} bytes, then {end}; stream finished: "
          f"{b'data: [DONE]' in received[-100:]}")
