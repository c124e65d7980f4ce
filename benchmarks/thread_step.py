"""The same engine stepped on the main thread (which loaded the model) and on a worker thread,
with the main thread's OpenMP workers kept and let go (`release_openmp_pool`).

    .venv/bin/python benchmarks/thread_step.py

GNU OpenMP keeps a worker pool for each thread that ran a parallel region; while both threads
keep one, every waiting worker sleeps at once and each region of the worker thread's starts by
waking one (`roseinfer/engine/openmp.py`). A decode step opens 2 regions, a 2,000-token prompt's
step 302, so the prompt shows it most (BENCHMARKS.md, session 73). `roseinfer serve` runs its
engine loop on the main thread; `EngineClient` on its own thread lets the main thread's go.
"""

from __future__ import annotations

import statistics
import threading
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
from roseinfer.engine.openmp import release_openmp_pool


def main() -> None:
    core = InferenceEngine(dtype="bfloat16").new_core()
    prompts = iter(range(1000))

    def run(label: str) -> None:
        """40 decode steps of one sequence, then a ~2,000-token prompt alone (a fresh one)."""
        core.add_request(f"d{label}", list(range(100, 170)),
                         SamplingParams(max_tokens=46, temperature=0, ignore_eos=True))  # fmt: skip
        for _ in range(5):
            core.step()
        steps = []
        while core.has_unfinished():
            start = time.perf_counter()
            core.step()
            steps.append(time.perf_counter() - start)
        n = next(prompts)
        ids = [100 + (n * 7 + i) % 3000 for i in range(2000)]
        start = time.perf_counter()
        core.add_request(
            f"p{label}", ids, SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
        )
        while core.has_unfinished():
            core.step()
        prompt = time.perf_counter() - start
        print(f"{label}: decode step p50 {statistics.median(steps) * 1000:.1f} ms, "
              f"a 2,000-token prompt {prompt * 1000:.0f} ms")  # fmt: skip

    def on_worker(label: str) -> None:
        worker = threading.Thread(target=lambda: [run(f"{label} ({i})") for i in (1, 2)])
        worker.start()
        worker.join()

    run("main thread")
    on_worker("worker thread, main's OpenMP workers kept")
    run("main thread again")
    release_openmp_pool()
    on_worker("worker thread, main's OpenMP workers let go")


if __name__ == "__main__":
    main()
