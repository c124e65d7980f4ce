"""An `EngineClient` on its own engine thread (the seeds' `SchedulerManager`'s way), the model
loaded on the main thread: a ~2,000-token prompt's time to its first event and one stream's
64 decode tokens (int8 + int8 KV), with `release_openmp_pool` as committed ("release") or
replaced by a no-op ("keep"). One variant a process; the driver runs them in turns.

    .venv/bin/python docs/bench/session73/client_thread_ab.py ROUNDS          # the driver
    .venv/bin/python docs/bench/session73/client_thread_ab.py - keep|release  # one process
"""

import queue
import statistics
import subprocess
import sys
import time


def one_process(variant: str) -> None:
    import roseinfer.engine.client as client_module
    from roseinfer import SamplingParams
    from roseinfer.engine import InferenceEngine

    if variant == "keep":
        client_module.release_openmp_pool = lambda: False
    engine = InferenceEngine(model="smollm2", dtype="bfloat16", quantization="int8")
    client = client_module.EngineClient(engine.new_core(kv_cache_dtype="int8"))
    prompts, decodes = [], []
    try:
        for r in range(7):
            out: queue.Queue = queue.Queue()
            ids = [100 + (r * 7 + i) % 3000 for i in range(2000)]
            params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
            start = time.perf_counter()
            client.submit_sync(f"p{r}", ids, params, out)
            while not out.get(timeout=60)[1].finished:
                pass
            prompt = time.perf_counter() - start
            ids = [100 + (r * 13 + i) % 3000 for i in range(64)]
            params = SamplingParams(max_tokens=65, temperature=0, ignore_eos=True)
            client.submit_sync(f"d{r}", ids, params, out)
            out.get(timeout=60)  # the first token
            start = time.perf_counter()
            tokens = 0
            while True:
                event = out.get(timeout=60)[1]
                tokens += len(event.token_ids)
                if event.finished:
                    break
            if r:  # the first round warms the engine thread up
                prompts.append(prompt)
                decodes.append((time.perf_counter() - start) / tokens)
    finally:
        client.shutdown()
    print(f"{variant}: prompt {1e3 * statistics.median(prompts):.1f} ms, "
          f"decode {1e3 * statistics.median(decodes):.2f} ms a token")  # fmt: skip


if sys.argv[1] == "-":
    one_process(sys.argv[2])
else:
    for r in range(int(sys.argv[1])):
        for variant in ("keep", "release") if r % 2 == 0 else ("release", "keep"):
            run = subprocess.run([sys.executable, __file__, "-", variant], capture_output=True,
                                 text=True, check=True)  # fmt: skip
            print(run.stdout.strip(), flush=True)
