import json, statistics, threading, time, httpx, string
from harness import *
def conc(name, path, bodies, timeout=300, settle=2.0, stream=False):
    res = [None] * len(bodies)
    def go(i, b):
        try:
            r = httpx.post(BASE + path, json=b, timeout=timeout); res[i] = f"{r.status_code} {r.text[:200]!r}"
        except Exception as e: res[i] = f"EXC {e!r}"[:200]
    with Victim() as v:
        time.sleep(settle); t0 = time.monotonic()
        ths = [threading.Thread(target=go, args=(i, b)) for i, b in enumerate(bodies)]
        for t in ths: t.start()
        for t in ths: t.join(timeout + 10)
        dt = time.monotonic() - t0; time.sleep(settle)
    during = [s for s in v.samples if s[0] + s[1] >= t0 and s[0] <= t0 + dt]
    try: h = httpx.get(BASE + "/health", timeout=10).status_code
    except Exception as e: h = repr(e)
    print(f"== {name}: {dt:.2f}s ->", *res, sep="\n   ")
    print(f"   victim during: {summary(during)}; all: {summary(v.samples)}; health={h}", flush=True)
    return res
def names():
    L = string.ascii_lowercase
    for a in L: yield a
    for a in L:
        for b in L: yield a + b
    for a in L:
        for b in L:
            for c in L: yield a + b + c
