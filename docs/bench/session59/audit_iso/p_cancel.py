"""Preemption + cancellation: hogs with long prompts/outputs force preemption in a 48-block cache
(max 4 running); some hogs are dropped mid-prefill, mid-stream, and while preempted/waiting.
A long greedy 'victim' (itself preempted) and the 6 refs must match their solo outputs."""
import asyncio, json, random, time
import httpx
from h import *

LONG = ("alpha beta gamma delta epsilon zeta eta theta iota kappa " * 40)
def hog(i, mt=200, stream=True):
    return {"prompt": LONG[i*7:] , "max_tokens": mt, "temperature": 0, "ignore_eos": True, "stream": stream}

VICTIM = {"prompt": "The history of the Roman empire " * 12, "max_tokens": 160, "temperature": 0, "ignore_eos": True}

async def victim(c):
    r = await c.post(BASE + "/v1/completions", json=VICTIM, timeout=300)
    j = r.json()
    return j["choices"][0]["text"] if r.status_code == 200 else ("HTTP", r.status_code, j)

async def drop_stream(c, i, after_chunks, delay=0.0):
    await asyncio.sleep(delay)
    n = 0
    try:
        async with c.stream("POST", BASE + "/v1/completions", json=hog(i), timeout=300) as r:
            if after_chunks == 0:
                return f"hog{i} dropped before any chunk (status {r.status_code})"
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    n += 1
                    if n >= after_chunks:
                        return f"hog{i} dropped after {n} chunks"
    except Exception as e:
        return f"hog{i} exc {e!r}"
    return f"hog{i} finished {n}"

async def drop_when_preempted(c, i):
    """stream; once the preemption counter rises, drop (likely while this newest one is preempted)"""
    base = (await asyncio.to_thread(metrics_sync))["num_preemptions_total"]
    n = 0
    async with c.stream("POST", BASE + "/v1/completions", json=hog(i), timeout=300) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                n += 1
                if n % 5 == 0:
                    m = await asyncio.to_thread(metrics_sync)
                    if m["num_preemptions_total"] > base:
                        return f"hog{i} dropped after preemption (chunks {n}, preemptions {m['num_preemptions_total']}, waiting {m['num_requests_waiting']})"
    return f"hog{i} finished without seeing preemption ({n})"

async def nonstream_timeout(c, i, t):
    try:
        await c.post(BASE + "/v1/completions", json=hog(i, stream=False), timeout=t)
        return f"hog{i} nonstream finished"
    except httpx.TimeoutException:
        return f"hog{i} nonstream dropped by client after {t}s"

async def main():
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100)) as c:
        refs = await refs_alone(c)
        v_alone = await victim(c)
        print("victim alone:", repr(v_alone[:80]))
        await state(c, "after solo")
        for rnd in range(3):
            advs = [victim(c), drop_stream(c, 1, 0), drop_stream(c, 2, 3), drop_stream(c, 3, 40),
                    drop_when_preempted(c, 4), drop_when_preempted(c, 5),
                    nonstream_timeout(c, 6, 1.0), nonstream_timeout(c, 7, 4.0),
                    drop_stream(c, 8, 1, delay=0.5), drop_stream(c, 9, 0, delay=1.0)]
            ok = await scenario(c, f"cancel round {rnd}", advs, refs, stream_refs=(rnd == 1), delay=0.2)
            # the victim result is the first adversary
        # check victim in last scenario separately
        res = await asyncio.gather(victim(c), drop_when_preempted(c, 4), drop_stream(c, 2, 3), drop_stream(c, 10, 20))
        print("victim identical under preemption:", res[0] == v_alone, res[1:])
        if res[0] != v_alone:
            print(" got ", repr(res[0][:200])); print(" want", repr(v_alone[:200]))
        await state(c, "final", wait=20)

asyncio.run(main())
