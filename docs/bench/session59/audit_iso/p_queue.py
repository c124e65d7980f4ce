"""--max-num-seqs 4 --max-waiting-requests 4 --num-kv-blocks 32 --request-timeout 5:
burst overflow, a whole-cache prompt, a stream that is never read, n=128 lockout."""
import asyncio, json, socket, time
import httpx
from h import *

async def burst(c, k):
    async def one(i):
        r = await c.post(BASE + "/v1/completions", json={"prompt": "burst %d" % i, "max_tokens": 30, "temperature": 0}, timeout=120)
        return r.status_code
    codes = await asyncio.gather(*[one(i) for i in range(k)])
    return "burst codes " + "".join("." if x == 200 else ("5" if x == 503 else str(x)) for x in codes)

async def whole_cache(c):
    ids = [100 + (i % 500) for i in range(511)]
    t = time.perf_counter()
    r = await c.post(BASE + "/v1/completions", json={"prompt": ids, "max_tokens": 1, "temperature": 0}, timeout=120)
    r2 = await c.post(BASE + "/v1/completions", json={"prompt": ids + [5], "max_tokens": 1, "temperature": 0}, timeout=120)
    return f"whole-cache prompt 511+1: {r.status_code} {time.perf_counter()-t:.2f}s; 512+1: {r2.status_code} {r2.text[:150]}"

def unread_stream_sync(seconds):
    body = json.dumps({"prompt": "never read " * 10, "max_tokens": 400, "n": 2, "logprobs": 20, "stream": True,
                       "temperature": 0, "ignore_eos": True}).encode()
    s = socket.create_connection(("127.0.0.1", 18311))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    time.sleep(seconds)
    got = 0
    s.settimeout(2)
    try:
        while True:
            b = s.recv(1 << 20)
            if not b: break
            got += len(b)
    except Exception as e:
        pass
    s.close()
    return got

async def unread(c, seconds=12):
    got = await asyncio.to_thread(unread_stream_sync, seconds)
    return f"unread stream: after {seconds}s read {got} bytes then EOF/timeout"

async def main():
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=200)) as c:
        refs = await refs_alone(c)
        m0 = await asyncio.to_thread(metrics_sync)
        await scenario(c, "burst 20 beside refs", [burst(c, 20)], refs, delay=0.0)
        await scenario(c, "whole-cache prompt beside refs", [whole_cache(c)], refs, delay=0.1)
        # unread stream: watch its blocks while refs run
        async def watch():
            await asyncio.sleep(1)
            samples = []
            for _ in range(16):
                m = await asyncio.to_thread(metrics_sync)
                samples.append((m["num_requests_running"], m["kv_cache_used_blocks"]))
                await asyncio.sleep(1)
            return f"(running, used blocks) each 1s: {samples}"
        await scenario(c, "unread stream", [unread(c), watch()], refs, delay=0.5)
        # n=128 when the queue is empty: taken whole, then others are refused until it drains
        async def big_n():
            r = await c.post(BASE + "/v1/completions", json={"prompt": "big n", "max_tokens": 20, "n": 128, "temperature": 0.8}, timeout=300)
            return f"n=128 -> {r.status_code}"
        async def probe_after():
            await asyncio.sleep(0.5)
            codes = []
            t = time.perf_counter()
            for _ in range(10):
                r = await c.post(BASE + "/v1/completions", json={"prompt": "hi", "max_tokens": 2}, timeout=60)
                codes.append(r.status_code)
                await asyncio.sleep(0.5)
            return f"small requests during n=128 (every 0.5s): {codes}"
        t = time.perf_counter()
        print(await asyncio.gather(big_n(), probe_after()), f"{time.perf_counter()-t:.1f}s")
        await state(c, "final", wait=30)

if __name__ == "__main__":
    asyncio.run(main())
