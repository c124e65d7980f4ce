"""Does building a big non-streamed response stall the event loop? /health polled every 20 ms
(max latency) during: a non-streamed n=2 logprobs=20 400-token completion; the same streamed;
a chat one with top_logprobs 20."""
import asyncio, time, httpx
from h import BASE
BODY = {"prompt": "never read " * 10, "max_tokens": 400, "n": 2, "logprobs": 20, "temperature": 0, "ignore_eos": True}
async def poll(c, stop):
    worst, n = 0.0, 0
    while not stop.is_set():
        t = time.perf_counter(); await c.get(BASE + "/health"); d = time.perf_counter() - t
        worst = max(worst, d); n += 1
        await asyncio.sleep(0.02)
    return worst, n
async def run(c, label, coro):
    stop = asyncio.Event()
    p = asyncio.create_task(poll(c, stop))
    t = time.perf_counter(); r = await coro; el = time.perf_counter() - t
    stop.set(); worst, n = await p
    print(f"{label:38s} {el:5.2f}s  /health worst {worst*1000:7.1f} ms over {n} polls  ({r})", flush=True)
async def main():
    async with httpx.AsyncClient(timeout=300) as c, httpx.AsyncClient(timeout=300) as c2:
        await run(c, "idle", asyncio.sleep(2))
        for _ in range(2):
            await run(c, "non-streamed n2 lp20 x400", c2.post(BASE + "/v1/completions", json=BODY))
            async def streamed():
                n = 0
                async with c2.stream("POST", BASE + "/v1/completions", json=dict(BODY, stream=True)) as r:
                    async for b in r.aiter_bytes(): n += len(b)
                return n
            await run(c, "streamed n2 lp20 x400", streamed())
            await run(c, "non-streamed n2 lp20 x400 echo", c2.post(BASE + "/v1/completions", json=dict(BODY, echo=True, prompt="word " * 100, max_tokens=300)))
asyncio.run(main())
