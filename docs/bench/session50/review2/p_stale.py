import asyncio, sys, time, httpx
sys.path.insert(0, "/work/main/tests")
from conftest import serve_in_process
from roseinfer.server.config import ServerConfig
M = "/tmp/s50/review/work/qwen2"
body = {"prompt": "word " * 40, "max_tokens": 150, "ignore_eos": True}

async def main(url, client):
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        tasks = [asyncio.ensure_future(http.post("/v1/completions", json=body)) for _ in range(12)]
        deadline = time.monotonic() + 60
        while client.engine.last_step.num_waiting < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        print("held back:", client.engine.last_step)
        for t in tasks: t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(200):
        await asyncio.sleep(0.05)
        if not client.engine.has_unfinished(): break
    await asyncio.sleep(0.5)
    print("idle:", client.engine.has_unfinished(), "stats", client.stats, "last_step", client.engine.last_step, "num_waiting", client.num_waiting)
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for i in range(3):
            rs = await asyncio.gather(*(http.post("/v1/completions", json={"prompt": "burst", "max_tokens": 2}) for _ in range(8)))
            print("burst", i, [r.status_code for r in rs])

with serve_in_process(M, 16, ServerConfig(max_waiting_requests=2)) as (app, url):
    asyncio.run(main(url, app.state.client))
