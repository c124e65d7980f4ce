"""Start K long streams (+1 non-streamed), SIGTERM (or SIGINT) the server after 2 s; print how each ends and when."""
import asyncio, os, signal, sys, time, httpx
B, pid, sig = sys.argv[1], int(sys.argv[2]), getattr(signal, sys.argv[3] if len(sys.argv) > 3 else "SIGTERM")
T0 = time.time()
async def stream(c, i):
    last = []; 
    try:
        async with c.stream("POST", B + "/v1/completions", headers={"Authorization": "Bearer k1"}, json={"prompt": "Once", "max_tokens": int(__import__("os").environ.get("MAXTOK", "300")), "ignore_eos": True, "stream": True}, timeout=60) as r:
            async for line in r.aiter_lines():
                if line: last = (last + [line])[-2:]
        return (i, "stream closed at %.1fs" % (time.time() - T0), [l[:160] for l in last])
    except Exception as e:
        return (i, "exc at %.1fs %s: %s" % (time.time() - T0, type(e).__name__, e), [l[:160] for l in last])
async def plain(c):
    try:
        r = await c.post(B + "/v1/completions", headers={"Authorization": "Bearer k1"}, json={"prompt": "Once", "max_tokens": int(__import__("os").environ.get("MAXTOK", "300")), "ignore_eos": True}, timeout=60)
        return ("non-stream", r.status_code, "%.1fs" % (time.time() - T0), r.text[:200])
    except Exception as e:
        return ("non-stream exc at %.1fs %s: %s" % (time.time() - T0, type(e).__name__, e))
async def after(c):
    await asyncio.sleep(2.0)
    os.kill(pid, sig); print("signal sent at %.1fs" % (time.time() - T0))
    await asyncio.sleep(0.5)
    try:
        r = await c.post(B + "/v1/completions", headers={"Authorization": "Bearer k1"}, json={"prompt": "Hi", "max_tokens": 2}, timeout=10)
        return ("new request after signal", r.status_code, r.text[:200])
    except Exception as e:
        return ("new request after signal: exc", type(e).__name__, str(e))
async def main():
    async with httpx.AsyncClient() as c:
        for r in await asyncio.gather(*(stream(c, i) for i in range(3)), plain(c), after(c)):
            print(r)
    for k in range(40):
        try: os.kill(pid, 0)
        except ProcessLookupError:
            print("server exited by %.1fs" % (time.time() - T0)); return
        time.sleep(0.5)
    print("server STILL RUNNING at %.1fs" % (time.time() - T0))
asyncio.run(main())
