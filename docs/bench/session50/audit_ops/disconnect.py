"""Open N streams with long max_tokens; some clients disconnect after a few chunks.
Then check /metrics running/waiting return to 0 and a follow-up request is quick."""
import asyncio, sys, time, httpx, re
B = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8870"
N = int(sys.argv[2]) if len(sys.argv) > 2 else 16

def gauge(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None

async def one(c, i, drop):
    body = {"prompt": "Once upon a time", "max_tokens": 200 if drop else 20, "stream": True, "ignore_eos": True}
    n = 0; last = None
    try:
        async with c.stream("POST", B + "/v1/completions", json=body, timeout=120) as r:
            async for line in r.aiter_lines():
                if line.startswith("data:"):
                    n += 1; last = line
                    if drop and n >= 3:
                        return (i, "dropped", n)
    except Exception as e:
        return (i, f"exc {type(e).__name__}: {e}", n)
    return (i, "done", n, (last or "")[:40])

async def main():
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=64)) as c:
        t = time.time()
        res = await asyncio.gather(*(one(c, i, i % 2 == 0) for i in range(N)))
        print("streams took %.1fs" % (time.time() - t))
        for r in res: print(r)
        for k in range(10):
            m = (await c.get(B + "/metrics")).text
            run, wait, used = gauge(m, "roseinfer_num_requests_running"), gauge(m, "roseinfer_num_requests_waiting"), gauge(m, "roseinfer_kv_cache_used_blocks")
            print("running", run, "waiting", wait, "used_blocks", used)
            if run == 0 and wait == 0: break
            await asyncio.sleep(0.5)
        print(re.findall(r"^roseinfer_requests_finished_total.*$", m, re.M))
        t = time.time()
        r = await c.post(B + "/v1/completions", json={"prompt": "Hi", "max_tokens": 4})
        print("follow-up", r.status_code, "%.2fs" % (time.time() - t))
asyncio.run(main())
