"""The loading thread's OpenMP workers let go when an engine thread takes over the model
(`roseinfer.engine.openmp`): while both threads kept pools, GNU OpenMP put every waiting worker
to sleep at once, and each parallel region of the engine thread's woke one."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import roseinfer.engine.client as client_module
from roseinfer.config import EngineConfig
from roseinfer.engine import EngineClient, LLMEngine
from roseinfer.loader import load_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# This process's threads around a parallel op (4M elements: several of at::parallel_for's
# grains) and the release, waiting up to 5 s for the workers to exit; prints the counts, or
# "none" where torch runs no GNU OpenMP (then nothing is asked of the release).
_COUNT_THREADS = """
import os, time, torch
from roseinfer.engine.openmp import gnu_openmp_runtimes, release_openmp_pool
torch.set_num_threads(2)
count = lambda: len(os.listdir("/proc/self/task"))
x = torch.ones(4_000_000)
float((x * 2).sum())
if not gnu_openmp_runtimes():
    print("none")
    raise SystemExit
pooled = count()
assert release_openmp_pool(), "GNU OpenMP is loaded, yet its pool was not let go"
deadline = time.monotonic() + 5
while count() >= pooled and time.monotonic() < deadline:
    time.sleep(0.01)
released = count()
float((x * 2).sum())
print(pooled, released, count())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
                    reason="threads seen in /proc; a pool needs 2+ CPUs")  # fmt: skip
def test_release_ends_the_calling_threads_workers_until_its_next_parallel_region():
    run = subprocess.run([sys.executable, "-c", _COUNT_THREADS], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    if run.stdout.strip() == "none":
        pytest.skip("this torch does not run GNU OpenMP")
    pooled, released, again = map(int, run.stdout.split())
    assert released == pooled - 1  # its one worker (two threads) gone
    assert again == pooled  # the next region has one again


def test_engine_client_on_its_own_thread_releases_the_constructing_threads_pool_first(
    tiny_model_dir, monkeypatch
):
    config = EngineConfig(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)
    engine = LLMEngine(load_model(config), config)

    def engine_threads() -> int:
        return sum(t.name == "roseinfer-engine" for t in threading.enumerate())

    calls: list[tuple[threading.Thread, int]] = []  # (the caller, engine threads running)
    monkeypatch.setattr(client_module, "release_openmp_pool",
                        lambda: calls.append((threading.current_thread(), engine_threads())))  # fmt: skip
    before = engine_threads()
    own = EngineClient(engine)
    try:
        # on the constructing thread, before its engine thread started
        assert calls == [(threading.current_thread(), before)]
        assert own.is_alive()
    finally:
        own.shutdown()
    EngineClient(engine, start_thread=False)  # the caller runs the loop: its pool is the one
    assert len(calls) == 1
