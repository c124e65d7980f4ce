"""Background responses of /v1/responses (`background: true`, as OpenAI's and vLLM's).

The POST is checked as any request is (a 400 or 503 before anything runs), then answered at
once: the Response `queued`, or, streamed, its events from the first. The generation runs as an
asyncio task of its own (`BackgroundRun`), not as part of the HTTP request: a client that
leaves does not stop it. While it runs, `GET /v1/responses/{id}` shows it `in_progress` with the
output items written so far; a streamed one keeps its events, so a reader can attach again
(`?stream=true&starting_after=N`: the events after sequence number N, then the new ones as they
come). `POST /v1/responses/{id}/cancel` aborts it: `cancelled`, with what it had written. When
it ends (completed, incomplete, failed or cancelled) it is stored as any response is, with a
streamed one's events, and its id held until then is free again.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from roseinfer.server.responses_output import (
    EventWriter,
    ResponseHead,
    response_events,
    response_usage,
)
from roseinfer.server.serving import GenerationGroup

logger = logging.getLogger(__name__)


@dataclass
class BackgroundRun:
    """One background response: its generation's task, the Response as it stands, and (where
    the request streamed) every event it has written, numbered from 0."""

    head: ResponseHead
    group: GenerationGroup
    prompt_tokens: int
    constraint_param: str | None  # what a failure of the request's own doing names
    streamed: bool
    status: str = "queued"
    final: dict | None = None  # the last Response object, once it has ended
    writer: EventWriter = field(default_factory=EventWriter)
    events: list[str] = field(default_factory=list)  # (kept only where `streamed`)
    task: asyncio.Task | None = None
    _on_end: Callable[[BackgroundRun], None] | None = None
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    def start(self, on_end: Callable[[BackgroundRun], None]) -> None:
        """Run the generation as a task of its own; `on_end` is called once, when it ends."""
        self._on_end = on_end
        self.task = asyncio.create_task(self._run(), name=f"background {self.head.id}")

    def snapshot(self) -> dict:
        """The Response as it stands: the final one, or `queued` / `in_progress` with the
        output items written so far (copies: the run goes on writing its own)."""
        if self.final is not None:
            return self.final
        return self.head.response(self.status, copy.deepcopy(self.writer.items))

    async def cancel(self) -> None:
        """Abort the generation and wait until the run has ended (`cancelled`, unless it ended
        first)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.wait({self.task})  # (not the task's cancellation raised here)
        if self.final is None:  # cancelled before its first step: its code never ran
            self._end(self._cancelled())

    async def follow(self, after: int = -1) -> AsyncIterator[str]:
        """The stream's events after sequence number `after`, then each new one as it comes,
        until the run has ended."""
        index = after + 1
        while True:
            wake = self._wake  # (taken before reading: an event added after it sets this one)
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if self.final is not None:
                return
            await wake.wait()

    async def _run(self) -> None:
        self.status = "in_progress"
        final: dict | None = None

        def done(response: dict) -> None:
            nonlocal final
            final = response

        try:
            events = response_events(self.head, self.group, self.prompt_tokens,
                                     self.constraint_param, done, self.writer)  # fmt: skip
            async for event in events:
                if self.streamed:
                    self.events.append(event)
                    self._notify()
        except asyncio.CancelledError:  # cancelled (the group's exit aborted its requests)
            if final is None:
                final = self._cancelled()
        except Exception:  # a bug: this response fails alone
            logger.exception("error in background response %s", self.head.id)
            if final is None:
                error = {"code": "server_error", "message": "internal error"}
                final = self.head.response("failed", self.writer.items, None, error)
        finally:
            self._end(final if final is not None else self._cancelled())

    def _end(self, final: dict) -> None:
        self.final, self.status = final, final["status"]
        self._notify()
        if self._on_end is not None:
            self._on_end(self)

    def _cancelled(self) -> dict:
        """The Response cut short by a cancel: what it had written, its open item
        `incomplete`, and the tokens it had used."""
        items = self.writer.items
        for item in items:
            if item["status"] == "in_progress":
                item["status"] = "incomplete"
        usage = response_usage(self.group, self.prompt_tokens)
        return self.head.response("cancelled", items, usage)

    def _notify(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()
