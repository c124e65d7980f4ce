"""Other endpoints beside the greedy refs: embeddings (OpenAI + llama.cpp) while generating,
/v1/responses streamed and dropped, background + cancel, llama.cpp /completion streamed and dropped,
/tokenize /detokenize large, /infill."""
import asyncio, json, time
import httpx
from h import *

async def post(c, path, body, timeout=300):
    t = time.perf_counter()
    try:
        r = await c.post(BASE + path, json=body, timeout=timeout)
        return r.status_code, round(time.perf_counter() - t, 2), r
    except Exception as e:
        return "EXC", repr(e), None

async def emb_one(c, text):
    s, t, r = await post(c, "/v1/embeddings", {"input": text, "encoding_format": "float"})
    return r.json()["data"][0]["embedding"] if s == 200 else (s, r.text[:200] if r else t)

async def emb_big(c):
    inputs = [("word%d " % i) * 60 for i in range(300)]
    s, t, r = await post(c, "/v1/embeddings", {"input": inputs, "encoding_format": "base64"})
    return f"emb_big {s} {t}s {len(r.content) if r else ''}"

async def llama_emb(c):
    s, t, r = await post(c, "/embedding", {"content": ["alpha " * 300, "beta " * 300, [5, 6, 7]]})
    return f"llama /embedding {s} {t}s {r.text[:80] if r is not None and s != 200 else ''}"

async def drop_sse(c, path, body, after, label):
    n = 0
    try:
        async with c.stream("POST", BASE + path, json=body, timeout=300) as r:
            if r.status_code != 200:
                return f"{label} status {r.status_code} {(await r.aread())[:200]!r}"
            async for line in r.aiter_lines():
                if line.startswith("data: ") or line.startswith("event: "):
                    n += 1
                    if n >= after:
                        return f"{label} dropped after {n} lines"
    except Exception as e:
        return f"{label} exc {e!r}"
    return f"{label} finished {n} lines"

async def bg_cancel(c):
    s, t, r = await post(c, "/v1/responses", {"input": "tell me a story " * 20, "max_output_tokens": 300,
                                              "background": True, "temperature": 0})
    if s != 200:
        return f"bg create {s} {r.text[:200] if r else t}"
    rid = r.json()["id"]
    await asyncio.sleep(0.3)
    s2, t2, r2 = await post(c, f"/v1/responses/{rid}/cancel", {})
    s3, t3, r3 = await post(c, f"/v1/responses/{rid}", None) if False else (None, None, await c.get(BASE + f"/v1/responses/{rid}"))
    return f"bg cancel {s2} status={r2.json().get('status') if r2 else None}; get -> {r3.status_code} {r3.json().get('status')}"

async def tok_big(c):
    s, t, r = await post(c, "/tokenize", {"prompt": "abc def " * 200000})
    s2, t2, r2 = await post(c, "/detokenize", {"tokens": list(range(1000)) * 200})
    return f"tokenize {s} {t}s ; detokenize {s2} {t2}s"

async def main():
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=200)) as c:
        refs = await refs_alone(c)
        e_alone = await emb_one(c, "The capital of France is")
        RESP = {"input": "Write a long poem about the sea.", "max_output_tokens": 200, "stream": True, "temperature": 0}
        advs = [emb_big(c), llama_emb(c), emb_one(c, "The capital of France is"),
                drop_sse(c, "/v1/responses", RESP, 5, "responses stream"),
                drop_sse(c, "/v1/responses", dict(RESP, store=False), 1, "responses stream store=false"),
                drop_sse(c, "/v1/responses", dict(RESP, background=True), 3, "responses background stream"),
                bg_cancel(c),
                drop_sse(c, "/completion", {"prompt": "Once", "n_predict": 200, "stream": True, "n_cmpl": 4}, 3, "llama /completion stream n4"),
                drop_sse(c, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 200, "stream": True, "n": 8}, 2, "chat stream n8"),
                post(c, "/infill", {"input_prefix": "def f(", "input_suffix": "):\n", "n_predict": 10}),
                tok_big(c)]
        for rnd in range(2):
            await scenario(c, f"endpoints round {rnd}", advs if rnd == 0 else advs[:0] + [emb_big(c), llama_emb(c), emb_one(c, "The capital of France is"), drop_sse(c, "/v1/responses", RESP, 5, "responses stream"), bg_cancel(c), tok_big(c)], refs, stream_refs=(rnd == 1))
        e2 = await emb_one(c, "The capital of France is")
        e3 = await asyncio.gather(emb_one(c, "The capital of France is"), one_ref(c, 4), one_ref(c, 1))
        diff = lambda a, b: max(abs(x - y) for x, y in zip(a, b)) if isinstance(a, list) and isinstance(b, list) else (a, b)
        print("embedding alone vs after:", diff(e_alone, e2), " vs beside generation:", diff(e_alone, e3[0]))
        await asyncio.sleep(1)
        await state(c, "final", wait=30)
        r = await c.get(BASE + "/v1/responses?limit=3")
        print("list responses:", r.status_code)

asyncio.run(main())
