"""A stream whose client never reads (--request-timeout 5): is it aborted? what does it cost?"""
import json, socket, sys, threading, time, httpx
from h import BASE, metrics_sync
BODY = {"prompt": "never read " * 10, "max_tokens": 400, "n": 2, "logprobs": 20, "stream": True, "temperature": 0, "ignore_eos": True}
t = time.perf_counter(); r = httpx.post(BASE + "/v1/completions", json=dict(BODY, stream=False), timeout=300)
print(f"non-streamed: {r.status_code} {time.perf_counter()-t:.2f}s {len(r.content)} bytes", flush=True)
t = time.perf_counter(); n = 0
with httpx.stream("POST", BASE + "/v1/completions", json=BODY, timeout=300) as s:
    for b in s.iter_bytes(): n += len(b)
print(f"streamed, read at once: {time.perf_counter()-t:.2f}s {n} bytes", flush=True)
body = json.dumps(BODY).encode()
s = socket.create_connection(("127.0.0.1", 18311))
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
t = time.perf_counter()
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 25):
    time.sleep(1)
    m = metrics_sync()
    print(f"t={time.perf_counter()-t:4.1f}s not reading: running={m['num_requests_running']} used_blocks={m['kv_cache_used_blocks']} finished={m['finished']}", flush=True)
s.settimeout(3); got = 0
try:
    while True:
        b = s.recv(1 << 20)
        if not b: break
        got += len(b)
except Exception as e: print("recv:", e)
print(f"then read {got} bytes; ends with: {b[-120:] if got else b''!r}")
