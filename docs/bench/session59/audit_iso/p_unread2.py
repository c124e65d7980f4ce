"""p_queue's unread stream again: SO_RCVBUF 4096 set after connect, refs beside or not."""
import asyncio, sys
from h import *
import p_queue as Q

async def main(with_refs):
    async with httpx.AsyncClient() as c:
        refs = await refs_alone(c)
        async def watch():
            await asyncio.sleep(1)
            samples = []
            for _ in range(14):
                m = await asyncio.to_thread(metrics_sync)
                samples.append((m["num_requests_running"], m["kv_cache_used_blocks"], m["num_preemptions_total"]))
                await asyncio.sleep(1)
            return f"(running, used, preemptions) each 1s: {samples}"
        t = time.perf_counter()
        res = await asyncio.gather(Q.unread(c, 12), watch(), *( [one_ref(c, i) for i in range(6)] if with_refs else []))
        print(with_refs, f"{time.perf_counter()-t:.1f}s", [str(x)[:400] for x in res[:2]], flush=True)
        await state(c, "after", wait=60)
        print(await asyncio.to_thread(metrics_sync))
asyncio.run(main(sys.argv[1] == "1"))
