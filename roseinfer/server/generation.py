"""From engine events to client text, on the event loop: one `GenerationGroup` per HTTP request.

A group submits its requests (one per prompt, n choices each) to the `EngineClient`, reads
their events from one `asyncio.Queue`, and feeds them to the one output processor
(`RequestState`: detokenizer, stop strings, finish reasons). Leaving the group's `async with`
aborts whatever still runs, whatever the reason: done, error, client gone, cancelled.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from roseinfer.engine.client import EngineClient
from roseinfer.output.processor import ChoiceState, RequestState
from roseinfer.output.reasoning import ReasoningParserName
from roseinfer.sampling_params import SamplingParams
from roseinfer.server import protocol as P
from roseinfer.server.json_text import dumps
from roseinfer.structured.tools import ToolUse

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}  # no proxy buffering


class GenerationGroup:
    """The requests of one HTTP request (one per prompt, `n` choices each), read from one
    queue through the output processor. Choice `k` of prompt `p` is the response's choice
    `p * n + k`."""

    def __init__(self, client: EngineClient, request_id: str,
                 requests: list[tuple[list[int], SamplingParams]],
                 tool_use: ToolUse | None = None,
                 stream_interval: int | None = None,
                 reasoning: ReasoningParserName | None = None,
                 report_progress: bool = False) -> None:  # fmt: skip
        """`tool_use`: the request's tools, whose calls the output processor reads from the
        text; `stream_interval`: its tokens per event after the first (None: the client's);
        `reasoning`: the format its thinking is read apart in (None: none); `report_progress`:
        each request's `prompt_progress` kept up to date while its prompt is computed."""
        self.client = client
        self.tool_use = tool_use
        self.reasoning = reasoning
        self.stream_interval = stream_interval
        self.report_progress = report_progress
        engine = client.engine
        self.states = [
            RequestState(
                f"{request_id}-{p}",
                ids,
                params,
                engine.tokenizer,
                engine.stop_token_ids,
                tool_use,
                reasoning,
            )  # fmt: skip
            for p, (ids, params) in enumerate(requests)
        ]
        self._by_id = {state.request_id: state for state in self.states}
        self._first_index = {}
        index = 0
        for state in self.states:
            self._first_index[state.request_id] = index
            index += len(state.choices)
        self._queue: asyncio.Queue = asyncio.Queue()
        self._num_open = index

    def state_of(self, index: int) -> RequestState:
        """The request of the response's choice `index`."""
        return self.states[index // self.states[0].params.n]

    @property
    def choices(self) -> list[tuple[int, ChoiceState]]:
        """(response index, choice) of every choice, in order."""
        return [
            (self._first_index[s.request_id] + c.index, c) for s in self.states for c in s.choices
        ]

    async def __aenter__(self) -> GenerationGroup:
        for state in self.states:
            self.client.submit(state.request_id, state.prompt_token_ids, state.params,
                               self._queue, self.stream_interval, self.report_progress)  # fmt: skip
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Abort what still runs (its KV blocks are freed before the next step)."""
        for state in self.states:
            if not state.finished:
                self.client.abort(state.request_id)  # first: nothing below may skip it
                for choice in state.choices:
                    choice.feed_or_fail((), "abort")

    async def events(self) -> AsyncIterator[tuple[int, ChoiceState, str]]:
        """(response index, choice, new text) as tokens arrive, until every choice is done."""
        while self._num_open:
            request_id, event = await self._queue.get()
            read = self.client.apply_event(self._by_id[request_id], event)
            if read is None:
                continue  # e.g. the abort event after a stop string matched
            choice, text = read
            self._num_open -= choice.finished
            yield self._first_index[request_id] + event.index, choice, text

    async def collect(self) -> list[tuple[int, ChoiceState]]:
        async for _ in self.events():
            pass
        return self.choices

    @property
    def num_output_tokens(self) -> int:
        return sum(s.num_output_tokens for s in self.states)

    @property
    def reasoning_tokens(self) -> int:
        """Output tokens of the engine's events that thought (with a reasoning parser)."""
        return sum(c.reasoning_tokens for s in self.states for c in s.choices)

    def usage(self, prompt_tokens: int, completion_tokens: int) -> dict:
        """A chat or completions response's usage; with a reasoning parser, OpenAI's
        `completion_tokens_details.reasoning_tokens` too."""
        use: dict = P.usage(prompt_tokens, completion_tokens)
        if self.reasoning is not None:
            use["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return use


def sse_data(obj: dict | str) -> str:
    return f"data: {obj if isinstance(obj, str) else dumps(obj)}\n\n"


class StreamFailed(Exception):
    """A raw text stream's request failed: raised out of the response, so the connection is
    dropped before its last chunk (raw text has no room for an error event; a clean end
    would read as a finished text)."""


async def text_stream(group: GenerationGroup) -> AsyncIterator[bytes]:
    """The seeds' /generate stream: raw UTF-8 text pieces. A failure cuts the response short
    (`StreamFailed`): the client's read fails, as on a dropped connection."""
    async with group:
        try:
            async for _, _, text in group.events():
                if text:
                    yield text.encode("utf-8")
        except Exception as e:
            raise StreamFailed(f"/generate stream failed: {type(e).__name__}: {e}") from e
