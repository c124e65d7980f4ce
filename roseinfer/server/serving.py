"""From engine events to client text, on the event loop: one `GenerationGroup` per HTTP request.

A group submits its choices (n per prompt) to the `SchedulerManager`, reads their events from
one `asyncio.Queue`, and turns each choice's tokens into text (incremental detokenizer, then
stop strings). Leaving the group's `async with` aborts every choice still running, whatever
the reason: done, error, client gone, cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import TypeVar

from starlette.requests import Request

from roseinfer.config import SamplingParams
from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.server import protocol as P
from roseinfer.server.manager import EngineEvent, SchedulerManager
from roseinfer.stop import StopStringChecker
from roseinfer.tokenizer import Tokenizer

T = TypeVar("T")
logger = logging.getLogger(__name__)


class RequestFailed(RuntimeError):
    """The engine failed this request (an error event)."""


class ClientDisconnected(Exception):
    """The client went away before the response was ready."""


class Choice:
    """One generated sequence: its text so far, token count and finish reason."""

    def __init__(
        self, index: int, prompt_ids: list[int], params: SamplingParams, tokenizer: Tokenizer
    ) -> None:
        self.index = index
        self.prompt_ids = prompt_ids
        self.params = params
        self.rid: int | None = None
        self.detok = IncrementalDetokenizer(tokenizer)
        self.detok.start_prompt(prompt_ids)
        self.stop = StopStringChecker(params.stop)
        self.stop_ids = frozenset(tokenizer.stop_token_ids) | frozenset(params.stop_token_ids)
        self._pieces: list[str] = []
        self.num_output_tokens = 0
        self.finish_reason: str | None = None
        self.stopped_by_string = False

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    @property
    def text(self) -> str:
        """Everything emitted so far."""
        return "".join(self._pieces)

    def feed(self, event: EngineEvent) -> str:
        """The text this event makes final. Sets `finish_reason` on the last one."""
        if event.error:
            self.finish_reason = "error"
            raise RequestFailed(event.error)
        pieces = []
        last = len(event.token_ids) - 1
        for i, token in enumerate(event.token_ids):
            self.num_output_tokens += 1
            if i == last and event.finish_reason == "stop" and token in self.stop_ids:
                continue  # the EOS / stop token itself is not text
            pieces.append(self.detok.on_token(token))
        if event.finished:
            pieces.append(self.detok.flush())
        emitted, matched = self.stop.feed("".join(pieces))
        if matched:
            self.finish_reason, self.stopped_by_string = "stop", True
        elif event.finished:
            emitted += self.stop.flush()
            self.finish_reason = event.finish_reason
        if emitted:
            self._pieces.append(emitted)
        return emitted


class GenerationGroup:
    """The choices of one HTTP request, multiplexed on one queue."""

    def __init__(self, manager: SchedulerManager, tokenizer: Tokenizer,
                 requests: list[tuple[list[int], SamplingParams]]) -> None:  # fmt: skip
        self.manager = manager
        self.choices = [Choice(i, ids, p, tokenizer) for i, (ids, p) in enumerate(requests)]
        self._queue: asyncio.Queue = asyncio.Queue()
        self._num_open = len(self.choices)

    async def __aenter__(self) -> GenerationGroup:
        for c in self.choices:
            c.rid = self.manager.submit(c.prompt_ids, c.params, self._queue, tag=c.index)
        return self

    async def __aexit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Abort every choice still running (their KV blocks are freed before the next step)."""
        for c in self.choices:
            if not c.done and c.rid is not None:
                c.finish_reason = "abort"
                self.manager.abort(c.rid)

    async def events(self) -> AsyncIterator[tuple[Choice, str]]:
        """(choice, new text) as tokens arrive, until every choice is done."""
        while self._num_open:
            tag, event = await self._queue.get()
            choice = self.choices[tag]
            if choice.done:
                continue  # e.g. the abort event after a stop string matched
            text = choice.feed(event)
            if choice.done:
                self._num_open -= 1
                if choice.stopped_by_string:
                    self.manager.abort(choice.rid, "stop")
            yield choice, text

    async def collect(self) -> list[Choice]:
        async for _ in self.events():
            pass
        return self.choices

    @property
    def num_output_tokens(self) -> int:
        return sum(c.num_output_tokens for c in self.choices)


async def until_disconnected(request: Request, work: Awaitable[T]) -> T:
    """Await `work`, or raise ClientDisconnected (cancelling it) if the client goes away first."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_wait_disconnect(request))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        raise ClientDisconnected()
    finally:
        for t in (task, watcher):
            if not t.done():
                t.cancel()


async def _wait_disconnect(request: Request) -> None:
    # The body has been read, so the next ASGI message is the disconnect (uvicorn sends it when
    # the connection closes).
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def sse_data(obj: dict | str) -> str:
    payload = (
        obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    )
    return f"data: {payload}\n\n"


async def sse_stream(group: GenerationGroup, rid: str, created: int, model: str, chat: bool,
                     prompt_tokens: int, include_usage: bool) -> AsyncIterator[str]:  # fmt: skip
    """SSE chunks of a streamed (chat) completion, then `data: [DONE]`.

    Chat streams open each choice with a `{"role": "assistant"}` delta; a choice's last chunk
    carries its finish_reason; with `include_usage` a last chunk has no choices and the usage.
    An error becomes an `{"error": ...}` event. Closing the stream aborts what is still running.
    """
    obj = "chat.completion.chunk" if chat else "text_completion"

    def chunk(choice: dict) -> str:
        return sse_data(P.chunk(rid, obj, created, model, [choice], include_usage))

    async with group:
        try:
            if chat:
                for c in group.choices:
                    yield chunk(
                        P.chat_chunk_choice(c.index, {"role": "assistant", "content": ""}, None)
                    )
            async for c, text in group.events():
                if not (text or c.done):
                    continue
                if chat:
                    yield chunk(
                        P.chat_chunk_choice(
                            c.index, {"content": text} if text else {}, c.finish_reason
                        )
                    )
                else:
                    yield chunk(P.completion_choice(c.index, text, c.finish_reason))
            if include_usage:
                final = P.chunk(rid, obj, created, model, [], False)
                final["usage"] = P.usage(prompt_tokens, group.num_output_tokens)
                yield sse_data(final)
        except RequestFailed as e:
            yield sse_data(P.error_body(f"generation failed: {e}", "server_error", None, 500))
        except Exception as e:  # a bug while processing this request: fail it alone
            logger.exception("error while streaming %s", rid)
            yield sse_data(
                P.error_body(f"internal error: {type(e).__name__}: {e}", "server_error", None, 500)
            )
        yield sse_data("[DONE]")


async def text_stream(group: GenerationGroup) -> AsyncIterator[bytes]:
    """The seeds' /generate stream: raw UTF-8 text pieces (an error just ends the stream)."""
    async with group:
        try:
            async for _, text in group.events():
                if text:
                    yield text.encode("utf-8")
        except Exception:
            logger.exception("error while streaming /generate")
