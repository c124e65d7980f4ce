import asyncio, httpx
BASE = "http://127.0.0.1:18401"
B = {"prompt": "The quick brown fox", "max_tokens": 48, "temperature": 1.0, "seed": 12345}
async def main():
    async with httpx.AsyncClient(base_url=BASE, timeout=120) as c:
        alone = (await c.post("/v1/completions", json=B)).json()["choices"][0]["text"]
        noise = [c.post("/v1/completions", json={"prompt": "noise %d " % i * (i + 1), "max_tokens": 60, "temperature": 1.0}) for i in range(12)]
        res = await asyncio.gather(c.post("/v1/completions", json=B), *noise, c.post("/v1/completions", json={**B, "n": 3}))
        batched = res[0].json()["choices"][0]["text"]
        n3 = [ch["text"] for ch in res[-1].json()["choices"]]
        print("alone == batched:", alone == batched)
        print("n=3 choice0 == alone:", n3[0] == alone)
        g = {"prompt": "The quick brown fox", "max_tokens": 48, "temperature": 0}
        ga = (await c.post("/v1/completions", json=g)).json()["choices"][0]["text"]
        noise = [c.post("/v1/completions", json={"prompt": "noise %d " % i * (i + 1), "max_tokens": 60, "temperature": 1.0}) for i in range(12)]
        res = await asyncio.gather(c.post("/v1/completions", json=g), *noise)
        print("greedy alone == batched:", ga == res[0].json()["choices"][0]["text"])
asyncio.run(main())
