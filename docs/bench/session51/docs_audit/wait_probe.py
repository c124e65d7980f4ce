import asyncio, json, sys, time, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
H = {"Authorization": "Bearer k1"}
async def one(c, i, n):
    r = await c.post(B+"/v1/completions", json={"prompt": "a", "max_tokens": n, "ignore_eos": True}, headers=H)
    return i, r.status_code, r.headers.get("retry-after"), r.text[:160]
async def main():
    async with httpx.AsyncClient(timeout=120) as c:
        # stream interval
        async with c.stream("POST", B+"/v1/completions", json={"prompt": "a", "max_tokens": 10, "ignore_eos": True, "stream": True, "logprobs": 0}, headers=H) as r:
            ch = [json.loads(l[6:]) for l in [x async for x in r.aiter_lines()] if l.startswith("data: {")]
        print("stream-interval 3: tokens per chunk", [len(x["choices"][0]["logprobs"]["tokens"]) for x in ch])
        async with c.stream("POST", B+"/v1/chat/completions", json={"messages": [{"role":"user","content":"a"}], "max_tokens": 10, "ignore_eos": True, "stream": True, "logprobs": True}, headers=H) as r:
            ch = [json.loads(l[6:]) for l in [x async for x in r.aiter_lines()] if l.startswith("data: {")]
        print("chat stream-interval 3: tokens per chunk", [len((x["choices"][0].get("logprobs") or {}).get("content") or []) for x in ch])
        t = [asyncio.create_task(one(c, i, 300)) for i in range(4)]
        for x in await asyncio.gather(*t): print(x)
asyncio.run(main())
