import asyncio, httpx, sys, time
U = f"http://127.0.0.1:{sys.argv[1]}"
async def main():
    async with httpx.AsyncClient(base_url=U, timeout=300) as c:
        body = {"prompt": "word " * 40, "max_tokens": 150, "ignore_eos": True}
        tasks = [asyncio.create_task(c.post("/v1/completions", json=body)) for i in range(30)]
        await asyncio.sleep(0.5)
        m = await c.get("/metrics")
        print([l for l in m.text.splitlines() if l.startswith("roseinfer_num_requests_")])
        late = await asyncio.gather(*(c.post("/v1/completions", json={"prompt": "late", "max_tokens": 1}) for _ in range(5)))
        print("late arrivals while the engine reports many waiting:", [r.status_code for r in late])
        rs = await asyncio.gather(*tasks)
        print([r.status_code for r in rs].count(200), "of 30 burst OK")
asyncio.run(main())
