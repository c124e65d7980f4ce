"""Background responses of /v1/responses (`background: true`, as OpenAI's and vLLM's).

The POST is checked as any request is (a 400 or 503 before anything runs), then answered at
once: the Response `queued`, or, streamed, its events from the first. The generation runs as an
asyncio task of its own (`BackgroundRun`), not as part of the HTTP request: a client that
leaves does not stop it. It is `queued` until its first tokens (the engine has computed its
prompt), then `in_progress`; `GET /v1/responses/{id}` shows it with the output items written so
far. A streamed one keeps its events for readers that attach again
(`?stream=true&starting_after=N`: the events after sequence number N, then the new ones as they
come); the events every running response keeps share one byte budget (`EventBudget`, the
store's `--responses-store-mib`), and past it the one keeping the most stops keeping them
(its readers so far still get every event, each from a queue of its own; a new one is
refused). `POST
/v1/responses/{id}/cancel` aborts it: `cancelled`, with what it had written. When it ends
(completed, incomplete, failed or cancelled) it is stored as any response is, with a streamed
one's events where they fit, and its id held until then is free again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from roseinfer.server.generation import GenerationGroup
from roseinfer.server.responses_output import (
    EventWriter,
    ResponseHead,
    response_events,
    response_usage,
)

logger = logging.getLogger(__name__)


@dataclass
class EventBudget:
    """The bytes of events the running background responses may keep, all together. Past it,
    the run keeping the most stops keeping them (the one streaming the largest answer, not the
    one that happens to write next)."""

    limit: int
    held: int = 0
    keepers: set[BackgroundRun] = field(default_factory=set)  # runs keeping events

    def take(self, run: BackgroundRun, n: int) -> bool:
        """Room for `n` more bytes of `run`'s (False: `run` is the one to stop keeping)."""
        while self.held + n > self.limit:
            largest = max(self.keepers | {run}, key=lambda r: r.events_bytes + (n if r is run
                                                                               else 0))  # fmt: skip
            if largest is run:
                return False
            largest.drop_events()
        self.keepers.add(run)
        self.held += n
        return True

    def give(self, run: BackgroundRun, n: int) -> None:
        self.held -= n
        self.keepers.discard(run)


class EventsNotKept(Exception):
    """A streamed background response's events were past the budget: no new reader."""


@dataclass(eq=False)  # (one object a run: kept in sets by identity)
class BackgroundRun:
    """One background response: its generation's task, the Response as it stands, and (where
    the request streamed) the events it has written, numbered from 0, for readers."""

    head: ResponseHead
    group: GenerationGroup
    prompt_tokens: int
    constraint_param: str | None  # what a failure of the request's own doing names
    streamed: bool
    budget: EventBudget
    items: list[dict]  # its input items, with the ids it is stored with
    final: dict | None = None  # the last Response object, once it has ended
    writer: EventWriter = field(default_factory=EventWriter)
    events: list[str] | None = field(default_factory=list)  # (None: not streamed, or past
    # the budget)
    events_bytes: int = 0
    task: asyncio.Task | None = None
    _readers: list[asyncio.Queue[str | None]] = field(default_factory=list)
    _on_end: Callable[[BackgroundRun], None] | None = None

    def __post_init__(self) -> None:
        if not self.streamed:
            self.events = None  # (no reader can attach: nothing to keep)

    def start(self, on_end: Callable[[BackgroundRun], None]) -> None:
        """Run the generation as a task of its own; `on_end` is called once, when it ends."""
        self._on_end = on_end
        self.task = asyncio.create_task(self._run(), name=f"background {self.head.id}")

    def snapshot(self) -> dict:
        """The Response as it stands: the final one, or `queued` / `in_progress` with the
        output items written so far (the run's own: write it out before the next await)."""
        if self.final is not None:
            return self.final
        return self.head.response(self.writer.status, self.writer.items)

    async def cancel(self) -> None:
        """Abort the generation and wait until the run has ended (`cancelled`, unless it ended
        first)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.wait({self.task})  # (not the task's cancellation raised here)
        if self.final is None:  # cancelled before its first step: its code never ran
            self._end(self._cancelled())

    def follow(self, after: int = -1) -> AsyncIterator[str]:
        """The stream's events after sequence number `after`, then each new one as it comes,
        until the run has ended (EventsNotKept where they were past the budget)."""
        if self.events is None:
            raise EventsNotKept(self.head.id)
        backlog = self.events[after + 1 :]
        if self.final is not None:
            return self._read(backlog, None, 0)
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._readers.append(queue)  # (from now on every event reaches it: none is missed)
        # (past the events written so far: the new ones up to `after` are skipped too)
        return self._read(backlog, queue, max(0, after + 1 - len(self.events)))

    async def _read(self, backlog: list[str], queue: asyncio.Queue[str | None] | None,
                    skip: int) -> AsyncIterator[str]:  # fmt: skip
        try:
            for old in backlog:
                yield old
            while queue is not None and (new := await queue.get()) is not None:
                if skip:
                    skip -= 1
                    continue
                yield new
        finally:  # (a reader gone: nothing more is queued for it)
            if queue in self._readers:
                self._readers.remove(queue)

    async def _run(self) -> None:
        final: dict | None = None

        def done(response: dict) -> None:
            nonlocal final
            final = response

        try:
            events = response_events(self.head, self.group, self.prompt_tokens,
                                     self.constraint_param, done, self.writer)  # fmt: skip
            async for event in events:
                self._publish(event)
        except asyncio.CancelledError:  # cancelled (the group's exit aborted its requests)
            if final is None:
                final = self._cancelled()
        except Exception:  # a bug: this response fails alone
            logger.exception("error in background response %s", self.head.id)
            if final is None:
                error = {"code": "server_error", "message": "internal error"}
                final = self.head.response("failed", self.writer.items, None, error)
                self._publish(self.writer.event("response.failed", response=final))
        finally:
            self._end(final if final is not None else self._cancelled())

    def _publish(self, event: str) -> None:
        if not self.streamed:
            return
        for queue in self._readers:
            queue.put_nowait(event)
        if self.events is None:
            return
        size = len(event.encode())
        if self.budget.take(self, size):
            self.events.append(event)
            self.events_bytes += size
            return
        self.drop_events()

    def drop_events(self) -> None:
        """Keep no events (their budget freed; readers attached so far go on)."""
        logger.warning("background response %s: the running responses' events passed "
                       "--responses-store-mib; its own are not kept for new readers",
                       self.head.id)  # fmt: skip
        self.budget.give(self, self.events_bytes)
        self.events, self.events_bytes = None, 0

    def _cancelled(self) -> dict:
        """The Response cut short by a cancel: what it had written, its open item
        `incomplete`, and the tokens it had used."""
        items = self.writer.items
        for item in items:
            if item["status"] == "in_progress":
                item["status"] = "incomplete"
        usage = response_usage(self.group, self.prompt_tokens)
        return self.head.response("cancelled", items, usage)

    def _end(self, final: dict) -> None:
        self.final = final
        self.writer.status = final["status"]
        for queue in self._readers:
            queue.put_nowait(None)
        self._readers.clear()
        if self._on_end is not None:
            self._on_end(self)  # (stores the events, then `release_events`)

    def release_events(self) -> None:
        """The run is stored: its events count against the store's bound, not the budget."""
        if self.events is not None:
            self.budget.give(self, self.events_bytes)
