"""Raw-socket HTTP probes: what the server answers to odd requests (status line + a bit of body)."""
import socket, sys, time
PORT = int(sys.argv[1])
def raw(data: bytes, read_s=3.0, shutdown=False):
    s = socket.create_connection(("127.0.0.1", PORT)); s.settimeout(read_s)
    s.sendall(data)
    if shutdown: s.shutdown(socket.SHUT_WR)
    out = b""
    t = time.time()
    try:
        while time.time() - t < read_s:
            b = s.recv(65536)
            if not b: break
            out += b
    except socket.timeout: pass
    s.close()
    return out
body = b'{"model":"x","prompt":"Hi","max_tokens":2,"temperature":0}'
def post(path, body, extra=b"", cl=True):
    h = b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra
    if cl: h += b"Content-Length: " + str(len(body)).encode() + b"\r\n"
    return h + b"\r\n" + body
cases = {
 "ok": post(b"/v1/completions", body),
 "bad request line": b"GARBAGE\r\n\r\n",
 "bad header": b"GET /health HTTP/1.1\r\nHost x\r\n\r\n",
 "http/1.0": b"GET /health HTTP/1.0\r\n\r\n",
 "no host 1.1": b"GET /health HTTP/1.1\r\n\r\n",
 "huge header": b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 200000 + b"\r\n\r\n",
 "chunked body": b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + hex(len(body))[2:].encode() + b"\r\n" + body + b"\r\n0\r\n\r\n",
 "cl too short": post(b"/v1/completions", body, b"Content-Length: 10\r\n", cl=False),
 "cl and te": post(b"/v1/completions", body, b"Transfer-Encoding: chunked\r\n"),
 "expect 100": post(b"/v1/completions", body, b"Expect: 100-continue\r\n"),
 "pipelined two": b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n",
 "head models": b"HEAD /v1/models HTTP/1.1\r\nHost: x\r\n\r\n",
 "options": b"OPTIONS /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n",
 "bad method": b"FOO /health HTTP/1.1\r\nHost: x\r\n\r\n",
 "nul in path": b"GET /he\x00alth HTTP/1.1\r\nHost: x\r\n\r\n",
 "utf8 path": "GET /v1/mödels HTTP/1.1\r\nHost: x\r\n\r\n".encode(),
 "lf only": b"GET /health HTTP/1.1\nHost: x\n\n",
 "body on get": b"GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
 "cl huge": post(b"/v1/completions", b"", b"Content-Length: 99999999999\r\n", cl=False),
 "cl negative": post(b"/v1/completions", b"", b"Content-Length: -1\r\n", cl=False),
 "two cl": post(b"/v1/completions", body, b"Content-Length: 3\r\n"),
 "http/2 preface": b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
 "half close": (post(b"/v1/completions", body), True),
}
for name, data in cases.items():
    shut = False
    if isinstance(data, tuple): data, shut = data
    try:
        out = raw(data, shutdown=shut)
    except OSError as e:
        print(f"{name:16s} {e!r}"); continue
    lines = out.split(b"\r\n")
    statuses = [l.decode(errors="replace") for l in lines if l.startswith(b"HTTP/")]
    tail = out[-160:].decode(errors="replace").replace("\r\n", " | ")
    print(f"{name:16s} {statuses}  ...{tail!r}")
