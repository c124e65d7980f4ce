"""Does one big /tokenize or /detokenize request stall the event loop for everyone else?
Ping /health every 20 ms while the big request runs; report the worst /health latency."""
import httpx, threading, time, json
B = "http://127.0.0.1:18201"
def probe(label, path, body):
    lat, stop = [], threading.Event()
    def pinger():
        with httpx.Client(base_url=B, timeout=60) as c:
            while not stop.is_set() and len(lat) < 3000:
                t = time.monotonic(); c.get("/health"); lat.append(time.monotonic() - t); time.sleep(0.02)
    th = threading.Thread(target=pinger); th.start(); time.sleep(0.3)
    t = time.monotonic()
    r = httpx.post(B + path, content=json.dumps(body), headers={"content-type": "application/json"}, timeout=120)
    dt = time.monotonic() - t
    time.sleep(0.2); stop.set(); th.join()
    print(f"== {label}: {r.status_code} in {dt:.2f}s, body {len(r.content)} bytes; /health worst {max(lat)*1000:.0f} ms, median {sorted(lat)[len(lat)//2]*1000:.1f} ms")
probe("baseline tokenize small", "/tokenize", {"prompt": "hi"})
big = "hello world " * 330_000   # ~3.96 MB
probe("tokenize 4MB prompt", "/tokenize", {"prompt": big})
probe("tokenize 4MB prompt + return_token_strs", "/tokenize", {"prompt": big, "return_token_strs": True})
ids = [28120, 905] * 280_000   # 560k ids, ~3.9 MB JSON
probe("detokenize 560k ids", "/detokenize", {"tokens": ids})
