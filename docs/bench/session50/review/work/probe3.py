import asyncio, httpx, sys, time
U = f"http://127.0.0.1:{sys.argv[1]}"
async def main():
    async with httpx.AsyncClient(base_url=U, timeout=300) as c:
        body = {"prompt": "word " * 40, "max_tokens": 150, "ignore_eos": True}
        tasks = [asyncio.create_task(c.post("/v1/completions", json=body)) for i in range(30)]
        seen = []
        while not all(t.done() for t in tasks):
            m = await c.get("/metrics")
            vals = {l.split()[0]: float(l.split()[1]) for l in m.text.splitlines() if l.startswith("roseinfer_num_requests_")}
            seen.append((vals.get("roseinfer_num_requests_running"), vals.get("roseinfer_num_requests_waiting")))
            await asyncio.sleep(0.02)
        rs = [t.result() for t in tasks]
        print("max waiting seen", max(s[1] for s in seen), "running values", sorted(set(s[0] for s in seen)))
        print([r.status_code for r in rs])
asyncio.run(main())
