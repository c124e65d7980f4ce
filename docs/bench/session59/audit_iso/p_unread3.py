"""whole-cache prompt, then the unread stream (SO_RCVBUF 4096) beside refs; server sampled."""
import asyncio
from h import *
import p_queue as Q
async def main():
    async with httpx.AsyncClient() as c:
        refs = await refs_alone(c)
        await scenario(c, "whole", [Q.whole_cache(c)], refs, delay=0.1)
        async def watch():
            await asyncio.sleep(1); s = []
            for _ in range(10):
                m = await asyncio.to_thread(metrics_sync); s.append((m["num_requests_running"], m["kv_cache_used_blocks"])); await asyncio.sleep(1)
            return s
        await scenario(c, "unread", [Q.unread(c, 12), watch()], refs, delay=0.5)
asyncio.run(main())
