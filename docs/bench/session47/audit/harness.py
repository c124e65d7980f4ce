import json, statistics, sys, threading, time, httpx

import os
BASE = f"http://127.0.0.1:{os.environ.get('AUDIT_PORT', '18101')}"  # 18201 for audit2/
VICTIM = {"prompt": "Hello world", "max_tokens": 4, "temperature": 0}

class Victim:
    def __init__(self):
        self.samples = []; self.stop = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
    def run(self):
        with httpx.Client(timeout=60) as c:
            while not self.stop.is_set():
                t0 = time.monotonic()
                try:
                    r = c.post(BASE + "/v1/completions", json=VICTIM); st = r.status_code
                except Exception as e:
                    st = repr(e)[:60]
                self.samples.append((t0, time.monotonic() - t0, st))
                time.sleep(max(0, 0.5 - (time.monotonic() - t0)))
    def __enter__(self): self.t.start(); return self
    def __exit__(self, *a): self.stop.set(); self.t.join(70)

def summary(samples):
    if not samples: return "no samples"
    lat = [s[1] for s in samples]; bad = [s[2] for s in samples if s[2] != 200]
    return f"n={len(lat)} med={statistics.median(lat)*1000:.0f}ms max={max(lat)*1000:.0f}ms bad={bad[:5]}"

def probe(name, path, body=None, raw=None, timeout=120, headers=None, settle=1.0):
    with Victim() as v:
        time.sleep(settle)
        t0 = time.monotonic()
        try:
            if raw is not None:
                r = httpx.post(BASE + path, content=raw, headers={"content-type": "application/json", **(headers or {})}, timeout=timeout)
            else:
                r = httpx.post(BASE + path, json=body, timeout=timeout)
            res = f"{r.status_code} {r.text[:300]!r}"
        except Exception as e:
            res = f"EXC {e!r}"[:300]
        dt = time.monotonic() - t0
        time.sleep(settle)
    during = [s for s in v.samples if s[0] + s[1] >= t0 and s[0] <= t0 + dt]
    try: h = httpx.get(BASE + "/health", timeout=10).status_code
    except Exception as e: h = repr(e)
    print(f"== {name}: {dt:.2f}s -> {res[:200]}\n   victim during: {summary(during)}; all: {summary(v.samples)}; health={h}", flush=True)
    return res
