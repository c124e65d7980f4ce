"""SchedulerManager (over EngineClient) in-process on a tiny random model: the seeds' sync API,
EngineClient's async API,
aborts freeing blocks, and an engine step that raises."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine, InvalidRequestError
from roseinfer.sampling_params import SamplingParams
from roseinfer.server.manager import SchedulerManager
from roseinfer.server.metrics import ServerMetrics


@pytest.fixture(scope="module")
def engine(tiny_model_dir):
    return InferenceEngine(
        EngineConfig(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)
    )


@pytest.fixture
def manager(engine):
    mgr = SchedulerManager(engine, max_batch_size=4, metrics=ServerMetrics())
    yield mgr
    mgr.shutdown()


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_seeds_sync_api_matches_single_request_generate(engine, manager):
    rid = manager.add_request(
        "Hello, world!", max_new_tokens=12, do_sample=False, stop_on_eos=False
    )
    text = "".join(manager.stream_text(rid, timeout=30))
    assert text == engine.generate(
        "Hello, world!", max_new_tokens=12, do_sample=False, stop_on_eos=False
    )
    assert text


def test_sync_api_refuses_requests_that_never_fit(manager):
    with pytest.raises(InvalidRequestError, match="maximum context length"):
        manager.add_request("Hello", max_new_tokens=10_000)


def test_async_api_many_concurrent_requests(engine, manager):
    async def one(prompt: str, n: int) -> tuple[int, str]:
        queue: asyncio.Queue = asyncio.Queue()
        ids = engine.encode_prompt(prompt)
        manager.client.submit(
            prompt, ids, SamplingParams(max_new_tokens=n, temperature=0, ignore_eos=True), queue
        )
        tokens = 0
        while True:
            _, event = await queue.get()
            tokens += len(event.token_ids)
            if event.finished:
                return tokens, event.finish_reason

    async def main():
        return await asyncio.wait_for(
            asyncio.gather(*(one(f"prompt {i}", 5 + i) for i in range(10))), 60
        )

    results = asyncio.run(main())
    assert results == [(5 + i, "length") for i in range(10)]
    assert wait_until(lambda: manager.stats.num_running == 0 and manager.stats.num_used_blocks == 0)


def test_stream_interval_groups_tokens_after_the_first(engine):
    """stream_interval=4: the first token alone, then 4 at a time, the rest with the finish;
    the same tokens as one per event, in the same order."""

    def events(interval: int, n: int) -> list[tuple[tuple[int, ...], str | None]]:
        mgr = SchedulerManager(engine, stream_interval=interval)
        out: asyncio.Queue = asyncio.Queue()

        async def main():
            ids = engine.encode_prompt("Count with me")
            params = SamplingParams(max_new_tokens=n, temperature=0, ignore_eos=True)
            mgr.client.submit("count", ids, params, out)
            got = []
            while not got or got[-1][1] is None:
                _, event = await asyncio.wait_for(out.get(), 30)
                got.append((event.token_ids, event.finish_reason))
            return got

        try:
            return asyncio.run(main())
        finally:
            mgr.shutdown()

    one = events(1, 10)
    grouped = events(4, 10)
    assert [len(t) for t, _ in one] == [1] * 10
    assert [len(t) for t, _ in grouped] == [1, 4, 4, 1]
    assert [tok for t, _ in grouped for tok in t] == [tok for t, _ in one for tok in t]
    assert grouped[-1][1] == one[-1][1] == "length"
    assert [len(t) for t, _ in events(4, 3)] == [1, 2]  # finished before a group filled


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_stream_interval_must_be_a_positive_integer(engine, bad):
    with pytest.raises(ValueError, match="stream_interval"):
        SchedulerManager(engine, stream_interval=bad, start_thread=False)


def test_closing_a_stream_aborts_and_frees_blocks(manager):
    rid = manager.add_request(
        "The quick brown fox", max_new_tokens=200, do_sample=False, stop_on_eos=False
    )
    pieces = manager.stream_text(rid, timeout=30)
    next(pieces)
    next(pieces)
    pieces.close()
    assert wait_until(lambda: manager.stats.num_running == 0 and manager.stats.num_used_blocks == 0)
    finished = manager.metrics.finished.labels(finished_reason="abort")._value.get()
    assert finished == 1


def test_failing_step_fails_running_requests_and_keeps_serving(engine):
    """A step that raises fails the batch it ran (each stream gets the error); the waiting
    request and later requests are served as usual."""
    mgr = SchedulerManager(engine, max_batch_size=1)  # one request runs, the others wait
    real_step = mgr.core.step
    armed = {"on": True}

    def flaky_step():
        stats = mgr.core.stats()
        if armed["on"] and stats.num_running >= 1 and stats.num_waiting >= 1:
            armed["on"] = False
            raise RuntimeError("boom")
        return real_step()

    mgr.core.step = flaky_step
    try:
        a = mgr.add_request("Hello", max_new_tokens=100, do_sample=False, stop_on_eos=False)
        b = mgr.add_request("world", max_new_tokens=6, do_sample=False, stop_on_eos=False)
        with pytest.raises(RuntimeError, match="engine step failed: RuntimeError: boom"):
            "".join(mgr.stream_text(a, timeout=30))
        assert "".join(mgr.stream_text(b, timeout=30))
        assert not armed["on"]
        c = mgr.add_request("again", max_new_tokens=4, do_sample=False)
        assert isinstance("".join(mgr.stream_text(c, timeout=30)), str)
        assert mgr.is_alive()
        assert wait_until(lambda: mgr.stats.num_used_blocks == 0 and mgr.stats.num_running == 0)
    finally:
        mgr.shutdown()


def test_shutdown_fails_outstanding_requests(engine):
    mgr = SchedulerManager(engine)
    rid = mgr.add_request("Hello", max_new_tokens=200, do_sample=False, stop_on_eos=False)
    pieces = mgr.stream_text(rid, timeout=30)
    next(pieces)
    mgr.shutdown()
    assert not mgr.is_alive()
    with pytest.raises(RuntimeError, match="shutting down"):
        for _ in pieces:
            pass


def _engine_thread_stack(mgr: SchedulerManager) -> list[str]:
    frame = sys._current_frames().get(mgr.client._thread.ident)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names


def test_idle_engine_thread_sleeps_on_the_wake_event_and_wakes_for_a_request(manager):
    """No polling: when idle, the engine thread is blocked in Event.wait inside its loop."""
    assert wait_until(
        lambda: (
            _engine_thread_stack(manager)[:1] == ["wait"]
            and "_run" in _engine_thread_stack(manager)
        )
    )
    rid = manager.add_request("Hello", max_new_tokens=3, do_sample=False, stop_on_eos=False)
    assert "".join(manager.stream_text(rid, timeout=30))
