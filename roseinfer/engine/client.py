"""`EngineClient`: the online front door. One engine thread drives the `LLMEngine`; request
handlers on any thread or event loop submit requests and read their tokens as events.

Threads and hand-offs:

- The engine thread is the only code that touches the `LLMEngine`. It loops: apply the queued
  commands (new requests, aborts), run one `step()`, hand each choice its new tokens. Per step
  it does O(batch) work. When nothing runs it sleeps on a `threading.Event`; `submit()` and
  `abort()` queue a command and set it, so a new request starts at once (no polling).
- Events go back as `(request_id, EngineEvent)`. Async callers pass an `asyncio.Queue`: each
  step's events for one event loop travel in one `loop.call_soon_threadsafe`, so thousands of
  streams need no thread each. Sync callers (the seeds' `SchedulerManager`) pass a
  `queue.Queue`.
- `stream_interval` N > 1 (`--stream-interval`, as vLLM's and SGLang's flag; a request may
  give its own) hands a choice's tokens over N at a time: the first token and the last event go at once, the rest wait for
  N. Each event costs the reader a chunk to write and parse; on 2 cores that time comes out of
  the engine's threads.
- Detokenizing, stop strings and finish reasons are the reader's, through the one output
  processor (`roseinfer.output.processor.RequestState`), off the engine thread.
- An exception in `step()` fails the requests that were running (each choice gets an error
  event) and the loop goes on serving the waiting and future requests.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator
from collections.abc import Sequence as Seq

import torch

from roseinfer.engine.events import (
    EngineEvent,
    EngineObserver,
    Sink,
    SubmittedRequest,
    check_stream_interval,
)
from roseinfer.engine.llm_engine import EngineStats, LLMEngine, StepOutput
from roseinfer.engine.openmp import release_openmp_pool
from roseinfer.engine.sequence import SequenceStatus
from roseinfer.output.processor import ChoiceState, RequestState
from roseinfer.outputs import FinishReason, RequestFailed, RequestOutput
from roseinfer.pooling_params import PoolingParams
from roseinfer.sampling_params import SamplingParams

logger = logging.getLogger(__name__)

__all__ = ["EngineClient", "EngineEvent", "EngineObserver", "RequestFailed"]


_OBSERVER_METHODS = tuple(name for name in vars(EngineObserver) if name.startswith("on_"))


class EngineClient:
    def __init__(
        self,
        engine: LLMEngine,
        *,
        observer: EngineObserver | None = None,
        start_thread: bool = True,
        stream_interval: int = 1,
    ) -> None:
        """`start_thread=False`: the caller runs the loop itself with `run_forever()`; the server
        does that on its main thread (see `server/cli.py` for why)."""
        check_stream_interval(stream_interval)
        # Checked here: a wrong one would fail every request inside the engine loop instead.
        missing = [m for m in _OBSERVER_METHODS if not callable(getattr(observer, m, None))]
        if observer is not None and missing:
            raise TypeError(f"observer {observer!r} lacks EngineObserver's {', '.join(missing)}")
        self.engine = engine
        self.stream_interval = stream_interval
        self.observer = observer
        self._commands: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._lock = threading.Lock()  # guards _num_pending
        self._num_pending = 0  # submitted, not yet handed to the engine
        self._num_added = 0  # engine thread only: handed over, not yet subtracted from pending
        self._live: dict[str, SubmittedRequest] = {}  # engine thread only
        self._in_prefill: dict[str, SubmittedRequest] = {}  # theirs that report progress
        self._deliveries: dict[asyncio.AbstractEventLoop, list] = {}  # engine thread only
        self._stopping = False
        self._running_here = False
        self._last_cached_count = 0.0
        self.stats: EngineStats = engine.stats()
        self._held_back = False  # whether the last step left requests waiting
        self._thread = threading.Thread(target=self._run, name="roseinfer-engine", daemon=True)
        if start_thread:
            # This thread (the model's loader, as a rule) keeps OpenMP workers; while it does,
            # each parallel region the engine thread opens first wakes a sleeping worker.
            release_openmp_pool()
            self._thread.start()

    # ---- any thread ----------------------------------------------------------------------
    @property
    def num_waiting(self) -> int:
        """Requests waiting for a seat: those not running (queued here or in the engine) beyond
        the seats free (`max_num_seqs` less what runs), none of which count as free if the last
        step held requests back (for KV blocks, the token budget): a burst into an idle server
        waits for nobody."""
        stats = self.stats
        queued = stats.num_waiting + self._num_pending
        free = 0 if self._held_back else max(0, self.engine.config.max_num_seqs - stats.num_running)
        return max(0, queued - free)

    def validate(self, prompt_ids: Seq[int], params: SamplingParams) -> None:
        """Raise InvalidRequestError if the engine can never serve this request."""
        self.engine.validate(prompt_ids, params)

    def submit(
        self,
        request_id: str,
        prompt_ids: Seq[int],
        params: SamplingParams,
        out: asyncio.Queue,
        stream_interval: int | None = None,
        report_progress: bool = False,
    ) -> None:
        """Queue a request from an event loop; `(request_id, EngineEvent)` items arrive on `out`.
        `stream_interval`: this request's tokens per event after its first (None: the
        client's); `report_progress`: an event (`EngineEvent.prompt_progress`) after each step
        that computed part of its prompt."""
        if stream_interval is not None:
            check_stream_interval(stream_interval)
        sink = (asyncio.get_running_loop(), out)
        self._submit(request_id, prompt_ids, params, sink, stream_interval, report_progress)

    def submit_sync(
        self, request_id: str, prompt_ids: Seq[int], params: SamplingParams, out: queue.Queue
    ) -> None:
        """As `submit`, for a caller on a plain thread."""
        self._submit(request_id, prompt_ids, params, out)

    def abort(
        self, request_id: str, reason: FinishReason = "abort", index: int | None = None
    ) -> None:
        """Finish a request (or its choice `index`) now: client gone, stop string seen. Its
        blocks are freed before the next step; its open choices get a last event."""
        self._commands.put(("abort", request_id, reason, index))
        self._wake.set()

    async def embed(
        self, request_id: str, prompt_ids: Seq[int], pooling: PoolingParams
    ) -> torch.Tensor:
        """An embedding request's vector ([hidden] float32): `LLMEngine.add_pooling_request`
        from an event loop. Cancelled, it is aborted; an engine failure raises RequestFailed."""
        if not isinstance(pooling, PoolingParams):  # None would queue a generation
            raise TypeError(f"pooling must be a PoolingParams, got {type(pooling).__name__}")
        self.engine.validate_pooling(prompt_ids)
        out: asyncio.Queue = asyncio.Queue()
        sink = (asyncio.get_running_loop(), out)
        self._queue(SubmittedRequest(request_id, list(prompt_ids), SamplingParams(), sink,
                                     pooling=pooling))  # fmt: skip
        try:
            _, event = await out.get()
        except BaseException:
            self.abort(request_id)
            raise
        if event.embedding is None:
            raise RequestFailed(event.error or "the engine failed this request",
                                event.invalid_request)  # fmt: skip
        return event.embedding

    async def generate(
        self, request_id: str, prompt_token_ids: Seq[int], params: SamplingParams
    ) -> AsyncIterator[RequestOutput]:
        """vLLM's `AsyncLLM.generate`: the request's `RequestOutput` (all its choices so far)
        each time one of them gets text or finishes. Leaving the loop early aborts it; an
        engine failure raises RequestFailed."""
        engine = self.engine
        state = RequestState(
            request_id, prompt_token_ids, params, engine.tokenizer, engine.stop_token_ids
        )
        out: asyncio.Queue = asyncio.Queue()
        self.submit(request_id, prompt_token_ids, params, out)
        try:
            while not state.finished:
                _, event = await out.get()
                read = self.apply_event(state, event)
                if read is not None and (read[1] or read[0].finished):
                    yield state.output()
        finally:
            if not state.finished:
                self.abort(request_id)

    def apply_event(
        self, state: RequestState, event: EngineEvent
    ) -> tuple[ChoiceState, str] | None:
        """Feed an event to its request's output state: (the choice, its new text), or None
        for a choice already done (the abort after a stop string). A stop string that matched
        aborts the choice in the engine; an error event raises RequestFailed."""
        if event.prompt_progress is not None:  # (no tokens in it)
            state.prompt_progress = event.prompt_progress
            return state.choices[event.index], ""
        if event.prompt_logprobs is not None:
            state.set_prompt_logprobs(event.prompt_logprobs)
        if event.index == 0:
            state.num_cached_tokens = event.num_cached_tokens
        choice = state.choices[event.index]
        if choice.finished:
            return None
        if event.error:
            choice.fail(event.error)
            raise RequestFailed(event.error, event.invalid_request)
        text = choice.feed_or_fail(event.token_ids, event.finish_reason, event.logprobs)
        if text is None:  # this choice alone fails
            if not event.finished:
                self.abort(state.request_id, "error", event.index)
            raise RequestFailed(choice.error or "output processing failed")
        if choice.ended_early and not event.finished:
            self.abort(state.request_id, choice.finish_reason or "stop", event.index)
        return choice, text

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

    def _submit(self, request_id: str, prompt_ids: Seq[int], params: SamplingParams, sink: Sink,
                stream_interval: int | None = None, report_progress: bool = False) -> None:  # fmt: skip
        self._queue(SubmittedRequest(request_id, list(prompt_ids), params, sink,
                                     stream_interval=stream_interval,
                                     report_progress=report_progress))  # fmt: skip

    def _queue(self, request: SubmittedRequest) -> None:
        with self._lock:
            self._num_pending += 1
        self._commands.put(("add", request))
        self._wake.set()

    # ---- engine thread -------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stopping:
            self._wake.clear()
            try:
                try:
                    self._apply_commands()
                finally:
                    self._settle_pending()
                stepped = self.engine.has_unfinished()
                outputs = self._step() if stepped else []
                # a pass without a step (idle, or only aborts) holds nobody back
                self._held_back = stepped and self.engine.last_step.num_waiting > 0
                if self._in_prefill:  # (before the tokens: the last one precedes the first)
                    self._report_progress()
                self._publish(outputs)
                self._update_stats()
            except Exception:  # a bug in the bookkeeping: fail what is running, keep serving
                logger.exception("engine loop error")
                self._fail_running("internal error in the engine loop")
            self._deliver()
            if not self.engine.has_unfinished() and self._commands.empty():
                self._wake.wait()
        self._fail_all("server is shutting down")
        self._deliver()

    def _apply_commands(self) -> None:
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            if cmd[0] == "add":
                self._num_added += 1
                self._add(cmd[1])
            else:
                _, request_id, reason, index = cmd
                req = self._live.get(request_id)
                if req is not None:
                    self.engine.abort_request(request_id, reason, index)
                    for i in sorted(req.open) if index is None else [index]:
                        self._finish(req, i, reason)

    def _settle_pending(self) -> None:
        """Refresh the stats, then stop counting the added requests as pending: in this order,
        `num_waiting` never misses a request that moved from our queue to the engine's."""
        self.stats = self.engine.stats()
        if self._num_added:
            with self._lock:
                self._num_pending -= self._num_added
            self._num_added = 0

    def _add(self, req: SubmittedRequest) -> None:
        try:
            if req.pooling is not None:
                self.engine.add_pooling_request(req.request_id, req.prompt_ids, req.pooling)
            else:
                self.engine.add_request(req.request_id, req.prompt_ids, req.params)
        except Exception as e:  # validated before submit, so this is rare
            for i in range(req.params.n):
                self._emit(req, EngineEvent(i, finish_reason="error", error=str(e)))
            return
        self._live[req.request_id] = req
        if req.report_progress:
            self._in_prefill[req.request_id] = req
        if self.observer is not None:
            for _ in range(req.params.n):
                self.observer.on_request_added(len(req.prompt_ids))

    def _step(self) -> list[StepOutput]:
        try:
            return self.engine.step()
        except Exception as e:
            logger.exception("engine step failed; failing the running requests")
            self._fail_running(f"engine step failed: {type(e).__name__}: {e}")
            return []

    def _publish(self, outputs: list[StepOutput]) -> None:
        now = time.perf_counter()
        generated = 0  # tokens (a failure or an embedding holds none)
        for out in outputs:
            generated += out.token_id is not None
            req = self._live.get(out.request_id)
            if req is None or out.index not in req.open:
                continue
            i, token, reason = out.index, out.token_id, out.finish_reason
            if out.prompt_logprobs is not None:
                req.prompt_logprobs = out.prompt_logprobs
            if i == 0:  # the choice that computed the prompt (the others wait for it)
                req.num_cached_tokens = out.num_cached_tokens
            req.embedding = out.embedding
            if token is not None:
                req.num_output_tokens[i] += 1
                if req.first_token_time[i] is None:
                    req.first_token_time[i] = now
                    if self.observer is not None:
                        self.observer.on_first_token(now - req.submit_time)
                req.pending[i].append(token)
                if out.logprobs is not None:
                    req.pending_logprobs[i].append(out.logprobs)
                if reason is None:
                    interval = req.stream_interval or self.stream_interval
                    if req.num_output_tokens[i] == 1 or len(req.pending[i]) >= interval:
                        self._emit(req, req.take(i))
                    continue
            if reason is not None:  # (a token is None only on a choice's last output)
                self._finish(req, i, reason, now, out.error, out.invalid_request)
        if self.observer is not None and outputs:
            self.observer.on_generated_tokens(generated)

    def _report_progress(self) -> None:
        """A progress event for each request whose prompt a step computed further (choice 0's:
        the choice that computes the prompt for all of them), until the whole of it is."""
        now = time.perf_counter()
        for request_id, req in list(self._in_prefill.items()):
            seqs = self.engine.sequences(request_id)  # ([] once finished)
            if seqs and 0 in req.open and (event := req.progress(seqs[0], now)) is not None:
                self._emit(req, event)
            if not seqs or 0 not in req.open or req.progress_sent == len(req.prompt_ids):
                del self._in_prefill[request_id]

    def _finish(self, req: SubmittedRequest, i: int, reason: FinishReason, now: float | None = None,
                error: str | None = None, invalid_request: bool = False) -> None:  # fmt: skip
        """Choice `i`'s last event; the request is forgotten once every choice finished."""
        if i not in req.open:
            return
        req.open.discard(i)
        self._emit(req, req.take(i, reason, error, invalid_request))
        if not req.open:
            self._live.pop(req.request_id, None)
        if self.observer is not None:
            self.observer.on_finished(reason, req.submit_time, req.first_token_time[i],
                                      now or time.perf_counter(), req.num_output_tokens[i])  # fmt: skip

    def _fail_running(self, message: str) -> None:
        """Fail the requests of the batch that broke (all but those still waiting); the waiting
        ones go on. If none was running, nothing narrower can be blamed: fail them all."""
        running = [
            req
            for req in self._live.values()
            if any(
                s.status is not SequenceStatus.WAITING
                for s in self.engine.sequences(req.request_id)
            )
            or not self.engine.sequences(req.request_id)
        ]
        for req in running or list(self._live.values()):
            self._fail(req, message)

    def _fail_all(self, message: str) -> None:
        for req in list(self._live.values()):
            self._fail(req, message)
        while True:  # requests submitted but never applied
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                break
            if cmd[0] == "add":
                for i in range(cmd[1].params.n):
                    self._emit(cmd[1], EngineEvent(i, finish_reason="error", error=message))

    def _fail(self, req: SubmittedRequest, message: str) -> None:
        try:
            self.engine.abort_request(req.request_id, "error")
        except Exception:
            logger.exception("could not abort request %s cleanly", req.request_id)
        self._live.pop(req.request_id, None)
        for i in sorted(req.open):
            self._emit(req, EngineEvent(i, finish_reason="error", error=message))
            if self.observer is not None:
                self.observer.on_finished("error", req.submit_time, req.first_token_time[i],
                                          time.perf_counter(), 0)  # fmt: skip
        req.open.clear()

    def _emit(self, req: SubmittedRequest, event: EngineEvent) -> None:
        sink = req.sink
        if isinstance(sink, tuple):  # (event loop, asyncio.Queue): batched per loop, see _deliver
            self._deliveries.setdefault(sink[0], []).append((sink[1], (req.request_id, event)))
        else:
            sink.put((req.request_id, event))

    def _deliver(self) -> None:
        deliveries, self._deliveries = self._deliveries, {}
        for loop, items in deliveries.items():
            try:
                loop.call_soon_threadsafe(_put_all, items)
            except RuntimeError:  # the loop is closed: nobody reads these requests any more
                pass

    def _update_stats(self) -> None:
        self.stats = self.engine.stats()
        if self.observer is None:
            return
        now = time.monotonic()
        idle = not self.engine.has_unfinished()
        # Counting prefix-cache blocks walks the free list: at most once a second, and when idle.
        cached = None
        if idle or now - self._last_cached_count > 1.0:
            self._last_cached_count = now
            cached = self.engine.block_manager.num_cached_free_blocks
        self.observer.on_stats(self.stats, self._num_pending, cached)


def _put_all(items: list) -> None:
    for q, item in items:
        q.put_nowait(item)
