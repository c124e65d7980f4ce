"""--max-num-seqs 1 --max-waiting-requests 1: one runs, one waits, the rest should be refused 503 + Retry-After."""
import asyncio, sys, time, httpx
B = sys.argv[1]; A = {"Authorization": "Bearer k1"}
async def req(c, i, delay, stream=False):
    await asyncio.sleep(delay)
    t = time.time()
    r = await c.post(B + "/v1/completions", headers=A, json={"prompt": "Once", "max_tokens": 60, "ignore_eos": True, "stream": stream}, timeout=120)
    return (i, r.status_code, r.headers.get("retry-after"), "%.1fs" % (time.time() - t), r.text[:160] if r.status_code != 200 else "")
async def main():
    async with httpx.AsyncClient() as c:
        for r in await asyncio.gather(*(req(c, i, 0.01 * i, i == 3) for i in range(5))):
            print(r)
        m = (await c.get(B + "/metrics")).text
        print([l for l in m.splitlines() if l.startswith("roseinfer_requests_finished_total") or l.startswith("roseinfer_num_requests")])
asyncio.run(main())
