"""The same decode step on the main thread and on a worker thread.

    .venv/bin/python benchmarks/thread_step.py

With torch's OpenMP backend, ops run 2-3x slower on a thread other than the first one that ran
them; this is why `roseinfer serve` runs the engine loop on the main thread (server/cli.py).
"""

from __future__ import annotations

import statistics
import threading
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine


def main() -> None:
    core = InferenceEngine(dtype="bfloat16").new_core()
    core.add_request(
        "0",
        list(range(100, 170)),
        SamplingParams(max_new_tokens=1000, temperature=0, ignore_eos=True),
    )
    for _ in range(5):
        core.step()

    def run(label: str) -> None:
        ts = []
        for _ in range(40):
            start = time.perf_counter()
            core.step()
            ts.append(time.perf_counter() - start)
        print(f"{label}: step p50 {statistics.median(ts) * 1000:.1f} ms")

    run("main thread")
    worker = threading.Thread(target=run, args=("worker thread",))
    worker.start()
    worker.join()
    run("main thread again")


if __name__ == "__main__":
    main()
