# Many bad_words: the per-step check runs on the engine thread for every row of the request.
import asyncio, httpx, json, sys, time
import os
BASE = os.environ.get("BASE", "http://127.0.0.1:18401")
W, N, T = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
words = [f"q{i}z" for i in range(W)]
body = {"prompt": "x", "max_tokens": T, "temperature": 0, "n": N, "ignore_eos": True, "bad_words": words}
print("body bytes", len(json.dumps(body)))
async def victim(c, lat, ev):
    while not ev.is_set():
        t = time.time()
        r = await c.post("/v1/completions", json={"prompt": "hello world", "max_tokens": 8, "temperature": 0})
        lat.append((round(time.time() - t, 3), r.status_code))
        await asyncio.sleep(0.05)
async def main():
    async with httpx.AsyncClient(base_url=BASE, timeout=300) as c:
        lat0 = []; ev0 = asyncio.Event()
        v = asyncio.create_task(victim(c, lat0, ev0)); await asyncio.sleep(1.5); ev0.set(); await v
        s0 = sorted(l for l, _ in lat0)
        print("victim alone: median %.3f max %.3f n=%d" % (s0[len(s0)//2], s0[-1], len(s0)))
        lat = []; ev = asyncio.Event()
        v = asyncio.create_task(victim(c, lat, ev))
        t = time.time(); r = await c.post("/v1/completions", json=body); dt = time.time() - t
        ev.set(); await v
        print("attacker", r.status_code, f"{dt:.2f}s", r.json().get("usage"))
        ls = sorted(l for l, _ in lat)
        print("victim during: n=%d median %.3f max %.3f statuses %s" % (len(ls), ls[len(ls)//2], ls[-1], {s for _, s in lat}))
asyncio.run(main())
