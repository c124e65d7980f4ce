"""--max-waiting-requests 2 on an idle server with the default --max-num-seqs (64): a burst of 8 simultaneous small requests.
All 8 fit in the batch at once, so none should be refused as 'waiting'."""
import asyncio, sys, httpx
B = sys.argv[1]
async def main():
    async with httpx.AsyncClient() as c:
        for trial in range(3):
            rs = await asyncio.gather(*(c.post(B + "/v1/completions", json={"prompt": "Hi", "max_tokens": 4}, timeout=60) for _ in range(8)))
            print("trial", trial, [r.status_code for r in rs], (next((r.text for r in rs if r.status_code != 200), ""))[:120])
            await asyncio.sleep(1)
asyncio.run(main())
