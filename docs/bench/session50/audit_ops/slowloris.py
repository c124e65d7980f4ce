"""One connection sends headers + half a body, then waits; is another request served meanwhile, and when does the server drop it?"""
import socket, time, sys, httpx
port = int(sys.argv[1]) if len(sys.argv) > 1 else 8870
s = socket.create_connection(("127.0.0.1", port))
body = b'{"prompt":"Hi","max_tokens":3}'
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:10])
t = time.time()
r = httpx.post(f"http://127.0.0.1:{port}/v1/completions", json={"prompt": "Hi", "max_tokens": 3}, timeout=30)
print("other request while slow body pending:", r.status_code, "%.2fs" % (time.time() - t))
s.settimeout(8)
try:
    data = s.recv(4096)
    print("server answered the partial body after %.1fs: %r" % (time.time() - t, data[:200]))
except socket.timeout:
    print("no answer/close within 8s: the connection is held open (uvicorn has no body-read timeout)")
s.close()
