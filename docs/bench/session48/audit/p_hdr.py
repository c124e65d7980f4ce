from h import *
import socket
big = b'{"prompt":"' + b'a'*(5<<20) + b'","max_tokens":1}'
show("5MB body", post("/v1/completions", big, raw=True))
def chunked(body):
    yield body[:10]; yield body[10:]
r = C.post("/v1/completions", content=chunked(b'{"prompt":"x","max_tokens":1}'), headers={"content-type": "application/json"}); print("chunked", r.status_code, r.text[:100])
def chunked_big():
    for i in range(6): yield b'a' * (1 << 20)
r = C.post("/v1/completions", content=chunked_big(), headers={"content-type": "application/json"}); print("chunked big", r.status_code, r.text[:150])
# raw socket: content-length larger than body, then close
def raw(req, wait=3):
    s = socket.create_connection(("127.0.0.1", 18401)); s.settimeout(wait); s.sendall(req)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d: break
            out += d
    except Exception as e: out += f"<{type(e).__name__}>".encode()
    s.close(); return out[:300]
print("CL too big", raw(b'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{"prompt":"x"}', 2))
print("CL negative", raw(b'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\nConnection: close\r\n\r\n{}'))
print("CL two", raw(b'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}'))
print("CL with chunked", raw(b'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n'))
print("health ok", C.get("/health").text)
