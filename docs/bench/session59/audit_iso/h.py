"""Shared helper: reference greedy requests, run adversaries alongside, check server state."""
import asyncio, json, re, sys, time
import httpx

BASE = "http://127.0.0.1:18311"
PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village,",
    "def fibonacci(n):",
    "List three colors: red,",
    "The quick brown fox " * 20,   # longer, ~ 100 tokens: chunked prefill with other stuff
    "In 1492, Columbus",
]
MAXTOK = 24

def ref_body(i, stream=False):
    return {"prompt": PROMPTS[i % len(PROMPTS)], "max_tokens": MAXTOK, "temperature": 0,
            "ignore_eos": True, "stream": stream}

async def one_ref(c, i, stream=False, timeout=120):
    body = ref_body(i, stream)
    t = time.perf_counter()
    if not stream:
        r = await c.post(BASE + "/v1/completions", json=body, timeout=timeout)
        j = r.json()
        if r.status_code != 200:
            return ("HTTP%d" % r.status_code, j, time.perf_counter() - t)
        return (j["choices"][0]["text"], j["choices"][0]["finish_reason"], time.perf_counter() - t)
    text, fin = "", None
    async with c.stream("POST", BASE + "/v1/completions", json=body, timeout=timeout) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                j = json.loads(line[6:])
                if "error" in j:
                    return ("ERR", j, time.perf_counter() - t)
                for ch in j["choices"]:
                    text += ch["text"]; fin = ch["finish_reason"] or fin
    return (text, fin, time.perf_counter() - t)

async def refs_alone(c, n=None):
    n = n or len(PROMPTS)
    out = []
    for i in range(n):
        out.append(await one_ref(c, i))
    return out

def metrics_sync():
    r = httpx.get(BASE + "/metrics", timeout=10).text
    m = {}
    for k in ("roseinfer_num_requests_running", "roseinfer_num_requests_waiting",
              "roseinfer_kv_cache_used_blocks", "roseinfer_num_preemptions_total"):
        mm = re.search(r"^%s(?:\{[^}]*\})? ([0-9.e+]+)" % k, r, re.M)
        m[k.replace("roseinfer_", "")] = float(mm.group(1)) if mm else None
    fin = re.findall(r'^roseinfer_requests_finished_total\{finished_reason="(\w+)"\} ([0-9.]+)', r, re.M)
    m["finished"] = {a: float(b) for a, b in fin}
    return m

async def state(c, label="", wait=15.0):
    """wait until idle (or wait s), then report health + metrics"""
    t0 = time.time()
    while True:
        m = await asyncio.to_thread(metrics_sync)
        idle = not m["num_requests_running"] and not m["num_requests_waiting"] and not m["kv_cache_used_blocks"]
        if idle or time.time() - t0 > wait:
            break
        await asyncio.sleep(0.3)
    h = await c.get(BASE + "/health", timeout=10)
    print(f"[state {label}] health={h.status_code} idle={idle} after {time.time()-t0:.1f}s {m}", flush=True)
    return idle

async def scenario(c, name, adversaries, refs, stream_refs=False, delay=0.0):
    """run refs concurrently with adversaries (list of coroutines); compare to refs"""
    print(f"=== {name}", flush=True)
    async def refs_run():
        await asyncio.sleep(delay)
        return await asyncio.gather(*[one_ref(c, i, stream_refs) for i in range(len(refs))],
                                    return_exceptions=True)
    t = time.perf_counter()
    res = await asyncio.gather(refs_run(), *adversaries, return_exceptions=True)
    got, advs = res[0], res[1:]
    ok = True
    for i, (g, r) in enumerate(zip(got, refs)):
        if isinstance(g, BaseException) or g[0] != r[0]:
            ok = False
            print(f"  REF {i} MISMATCH: got={g!r:.300} want={r[0]!r:.100}", flush=True)
    print(f"  refs identical={ok}; max ref latency={max((g[2] for g in got if not isinstance(g, BaseException)), default=-1):.2f}s; total {time.perf_counter()-t:.2f}s", flush=True)
    for a in advs:
        print(f"  adv -> {a!r:.400}", flush=True)
    await state(c, name)
    return ok
