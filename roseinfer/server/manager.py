"""SchedulerManager: one engine thread drives the OnlineScheduler; everyone else talks to it.

Threads and hand-offs:

- The engine thread is the only code that touches the `OnlineScheduler`. It loops: apply the
  queued commands (new requests, aborts), run one `step()`, hand each request its new token,
  clean up the requests in `pop_finished_ids()`. Per step it does O(batch + finished) work.
- When nothing is running it sleeps on a `threading.Event`; `submit()` / `abort()` put a command
  on a thread-safe queue and set the event, so a new request starts at once (no polling delay).
- Outputs go back as `EngineEvent`s. Async callers pass an `asyncio.Queue`: each step's events
  for one event loop travel in a single `loop.call_soon_threadsafe`, so thousands of concurrent
  streams need no thread each. Sync callers (the seeds' `stream_text`) get a `queue.Queue`.
- `stream_interval` N > 1 (`--stream-interval`, as vLLM's and SGLang's flag) hands a request's
  tokens over N at a time: the first token and the last event go at once, the rest wait for N.
  Each event costs the HTTP thread (and the client) a chunk to write and parse; on 2 cores that
  time comes out of the engine's OpenMP threads.
- Detokenization and stop strings are the reader's job, off the engine thread.
- An exception in `step()` fails the requests that were running (each gets an error event) and
  the loop goes on serving the waiting and future requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.engine.inference import InferenceEngine
from roseinfer.engine.llm_engine import EngineStats
from roseinfer.engine.schedulers import OnlineScheduler
from roseinfer.engine.sequence import SequenceStatus

logger = logging.getLogger(__name__)

__all__ = ["EngineEvent", "SchedulerManager"]


@dataclass(frozen=True, slots=True)
class EngineEvent:
    """What one step produced for one request."""

    token_ids: tuple[int, ...] = ()  # new tokens, in order (one per step, or stream_interval)
    finish_reason: str | None = None  # set on a request's last event: stop | length | abort | error
    error: str | None = None  # why the request failed inside the engine

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass(eq=False, slots=True)
class _Request:
    """Engine-thread bookkeeping of one submitted request."""

    rid: int
    prompt_ids: list[int]
    params: SamplingParams
    sink: Any  # (event loop, asyncio.Queue) or queue.Queue
    tag: Any  # passed back with every event (the choice index)
    sched_rid: int | None = None
    submit_time: float = field(default_factory=time.perf_counter)
    first_token_time: float | None = None
    num_output_tokens: int = 0
    pending: list[int] = field(default_factory=list)  # tokens held back by stream_interval


class SchedulerManager:
    def __init__(
        self,
        engine: InferenceEngine,
        config: EngineConfig | None = None,
        *,
        max_batch_size: int | None = None,
        metrics: Any = None,
        scheduler: OnlineScheduler | None = None,
        start_thread: bool = True,
        stream_interval: int = 1,
    ) -> None:
        """`start_thread=False`: the caller runs the loop itself with `run_forever()`; the server
        does that on its main thread (see `server/cli.py` for why). `stream_interval`: tokens per
        event after a request's first (see the module docstring)."""
        if isinstance(stream_interval, bool) or not isinstance(stream_interval, int):
            raise ValueError(f"stream_interval must be an integer, got {stream_interval!r}")
        if stream_interval < 1:
            raise ValueError(f"stream_interval must be >= 1, got {stream_interval}")
        self.stream_interval = stream_interval
        self.engine = engine
        overrides = (
            {}
            if config is None
            else {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
        )
        self.scheduler = scheduler or OnlineScheduler(
            engine, max_batch_size=max_batch_size, **overrides
        )
        self.metrics = metrics  # ServerMetrics or None
        self._commands: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._ids = itertools.count()
        self._lock = threading.Lock()  # guards _num_pending
        self._num_pending = 0  # submitted, not yet handed to the scheduler
        self._num_added = 0  # engine thread only: handed over, not yet subtracted from pending
        self._live: dict[int, _Request] = {}  # engine thread only: by our request id
        self._by_sched: dict[int, _Request] = {}  # engine thread only: by the scheduler's id
        self._deliveries: dict[Any, list] = {}  # engine thread only: loop -> [(queue, item)]
        self._sync: dict[int, tuple[queue.Queue, list[int]]] = {}  # the seeds' streams
        self._stopping = False
        self._running_here = False
        self._last_cached_count = 0.0
        self.stats: EngineStats = self.scheduler.core.stats()
        self._thread = threading.Thread(target=self._run, name="roseinfer-engine", daemon=True)
        if start_thread:
            self._thread.start()

    # ---- any thread ----------------------------------------------------------------------
    @property
    def core(self):
        return self.scheduler.core

    @property
    def num_waiting(self) -> int:
        """Requests not running yet: still queued here, or waiting in the scheduler."""
        return self._num_pending + self.stats.num_waiting

    def validate(self, prompt_ids: list[int], params: SamplingParams) -> None:
        """Raise InvalidRequestError if the engine can never serve this request (reads constants only)."""
        self.scheduler.core.validate(prompt_ids, params)

    def submit(
        self, prompt_ids: list[int], params: SamplingParams, out: asyncio.Queue, tag: Any = None
    ) -> int:
        """Queue a request from the event loop; its events arrive on `out` as (tag, EngineEvent)."""
        return self._submit(prompt_ids, params, (asyncio.get_running_loop(), out), tag)

    def abort(self, rid: int, reason: str = "abort") -> None:
        """Finish a request now (client gone, stop string seen); its blocks are freed before the next step."""
        self._commands.put(("abort", rid, reason))
        self._wake.set()

    def is_alive(self) -> bool:
        return self._thread.is_alive() or self._running_here

    def run_forever(self) -> None:
        """Run the engine loop on the calling thread until `shutdown()`."""
        self._running_here = True
        try:
            self._run()
        finally:
            self._running_here = False

    def shutdown(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # ---- the seeds' synchronous API ------------------------------------------------------
    def add_request(
        self,
        prompt: str,
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
    ) -> int:
        """Queue a prompt; read its text with `stream_text(rid)`. Bad input raises ValueError."""
        params = SamplingParams(max_new_tokens=max_new_tokens, temperature=temperature, top_k=top_k, top_p=top_p,
                                stop_on_eos=stop_on_eos, do_sample=do_sample)  # fmt: skip
        ids = self.engine.encode_prompt(prompt)
        self.validate(ids, params)
        out: queue.Queue = queue.Queue()
        rid = self._submit(ids, params, out, None)
        self._sync[rid] = (out, ids)
        return rid

    def stream_text(self, rid: int, timeout: float | None = None) -> Iterator[str]:
        """Text pieces of a request from `add_request`, detokenized in the caller's thread.

        `timeout`: longest wait for the next token (TimeoutError; the request is aborted)."""
        entry = self._sync.pop(rid, None)
        if entry is None:
            return
        out, prompt_ids = entry
        detok = IncrementalDetokenizer(self.engine.tokenizer)
        detok.start_prompt(prompt_ids)
        finished = False
        try:
            while not finished:
                try:
                    _, event = out.get(timeout=timeout)
                except queue.Empty:
                    raise TimeoutError(f"no output from request {rid} in {timeout} s") from None
                if event.error:
                    raise RuntimeError(event.error)
                for token in event.token_ids:
                    piece = detok.on_token(token)
                    if piece:
                        yield piece
                finished = event.finished
            tail = detok.flush()
            if tail:
                yield tail
        finally:
            if not finished:
                self.abort(rid)

    # ---- engine thread -------------------------------------------------------------------
    def _submit(self, prompt_ids: list[int], params: SamplingParams, sink: Any, tag: Any) -> int:
        rid = next(self._ids)
        with self._lock:
            self._num_pending += 1
        self._commands.put(("add", _Request(rid, list(prompt_ids), params, sink, tag)))
        self._wake.set()
        return rid

    def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                try:
                    self._apply_commands()
                finally:
                    self._settle_pending()
                step_tokens = self._step() if self.scheduler.has_unfinished() else {}
                self._publish(step_tokens, self.scheduler.pop_finished_ids())
                self._update_stats()
            except Exception:  # a bug in the bookkeeping: fail what is running, keep serving
                logger.exception("engine loop error")
                self._fail_running("internal error in the engine loop")
            self._deliver()
            if not self.scheduler.has_unfinished() and self._commands.empty():
                self._wake.wait()
        self._fail_all("server is shutting down")
        self._deliver()

    def _apply_commands(self) -> None:
        """Hand queued requests to the scheduler and apply queued aborts."""
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            if cmd[0] == "add":
                self._num_added += 1
                self._add(cmd[1])
            else:
                req = self._live.get(cmd[1])
                if req is not None and req.sched_rid is not None:
                    self.scheduler.abort_request(req.sched_rid, cmd[2])

    def _settle_pending(self) -> None:
        """Refresh the stats, then stop counting the added requests as pending: in this order,
        `num_waiting` never misses a request that moved from our queue to the scheduler's."""
        self.stats = self.scheduler.core.stats()
        if self._num_added:
            with self._lock:
                self._num_pending -= self._num_added
            self._num_added = 0

    def _add(self, req: _Request) -> None:
        try:
            req.sched_rid = self.scheduler.add_request(
                prompt_token_ids=req.prompt_ids, params=req.params
            )
        except Exception as e:  # validated before submit, so this is rare
            self._emit(req, EngineEvent(finish_reason="error", error=str(e)))
            return
        self._live[req.rid] = req
        self._by_sched[req.sched_rid] = req
        if self.metrics is not None:
            self.metrics.on_request_added(len(req.prompt_ids))

    def _step(self) -> dict[int, int]:
        try:
            return self.scheduler.step()
        except Exception as e:
            logger.exception("engine step failed; failing the running requests")
            self._fail_running(f"engine step failed: {type(e).__name__}: {e}")
            return {}

    def _publish(self, step_tokens: dict[int, int], finished_ids: list[int]) -> None:
        now = time.perf_counter()
        finished = set(finished_ids)
        for srid, token in step_tokens.items():
            req = self._by_sched.get(srid)
            if req is None:
                continue
            req.num_output_tokens += 1
            if req.first_token_time is None:
                req.first_token_time = now
                if self.metrics is not None:
                    self.metrics.on_first_token(now - req.submit_time)
            if srid not in finished:
                req.pending.append(token)
                if req.num_output_tokens == 1 or len(req.pending) >= self.stream_interval:
                    self._emit(req, EngineEvent(tuple(req.pending)))
                    req.pending.clear()
        if self.metrics is not None and step_tokens:
            self.metrics.on_generated_tokens(len(step_tokens))
        for srid in finished_ids:
            req = self._by_sched.pop(srid, None)
            if req is None:
                continue
            seq = self.scheduler.get_sequence(srid)
            reason = (seq.finish_reason if seq is not None else None) or "abort"
            token = step_tokens.get(srid)
            tokens = req.pending + ([token] if token is not None else [])
            self._emit(req, EngineEvent(tuple(tokens), reason))
            self._forget(req)
            if self.metrics is not None:
                self.metrics.on_finished(
                    reason, req.submit_time, req.first_token_time, now, req.num_output_tokens
                )

    def _forget(self, req: _Request) -> None:
        self._live.pop(req.rid, None)
        if req.sched_rid is not None:
            self._by_sched.pop(req.sched_rid, None)
            self.scheduler.discard_request(req.sched_rid)

    def _fail_running(self, message: str) -> None:
        """Fail the requests of the batch that broke (all but the waiting ones); the waiting
        ones go on. If none was running, nothing narrower can be blamed: fail them all."""
        blamed = 0
        for req in list(self._by_sched.values()):
            seq = self.scheduler.get_sequence(req.sched_rid)
            if seq is None or seq.status is not SequenceStatus.WAITING:
                self._fail(req, message)
                blamed += 1
        if not blamed:
            for req in list(self._by_sched.values()):
                self._fail(req, message)
        self.scheduler.pop_finished_ids()

    def _fail_all(self, message: str) -> None:
        for req in list(self._live.values()):
            self._fail(req, message)
        while True:  # requests submitted but never applied
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                break
            if cmd[0] == "add":
                self._emit(cmd[1], EngineEvent(finish_reason="error", error=message))

    def _fail(self, req: _Request, message: str) -> None:
        try:
            self._emit(req, EngineEvent(finish_reason="error", error=message))
            self._forget(req)
        except Exception:
            logger.exception("could not fail request %d cleanly", req.rid)
        if self.metrics is not None:
            self.metrics.on_finished(
                "error", req.submit_time, req.first_token_time, time.perf_counter(), 0
            )

    def _emit(self, req: _Request, event: EngineEvent) -> None:
        sink = req.sink
        if isinstance(sink, tuple):  # (event loop, asyncio.Queue): batched per loop, see _deliver
            self._deliveries.setdefault(sink[0], []).append((sink[1], (req.tag, event)))
        else:
            sink.put((req.tag, event))

    def _deliver(self) -> None:
        deliveries, self._deliveries = self._deliveries, {}
        for loop, items in deliveries.items():
            try:
                loop.call_soon_threadsafe(_put_all, items)
            except RuntimeError:  # the loop is closed: nobody reads these requests any more
                pass

    def _update_stats(self) -> None:
        core = self.scheduler.core
        self.stats = core.stats()
        if self.metrics is None:
            return
        now = time.monotonic()
        idle = not self.scheduler.has_unfinished()
        # Counting prefix-cache blocks walks the free list: at most once a second, and when idle.
        cached = None
        if idle or now - self._last_cached_count > 1.0:
            self._last_cached_count = now
            cached = core.block_manager.num_cached_free_blocks
        self.metrics.on_stats(self.stats, self._num_pending, cached)


def _put_all(items: list) -> None:
    for q, item in items:
        q.put_nowait(item)
