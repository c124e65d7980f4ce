"""A finished or streaming chat generation as OpenAI's Response object and its stream events.

A response's output is a `reasoning` item with one `reasoning_text` part (the thinking, where
the server's `--reasoning-parser` read any apart), a `message` item with one `output_text` part
(the answer's text, where it wrote any, or neither thought nor called), then one
`function_call` item per call, in order. Cut by
`max_output_tokens` it is `incomplete` (`incomplete_details.reason: "max_output_tokens"`), its
message too; a request the engine fails is a `response.failed` event once the stream has begun
(its status, 200, is sent), else an error body as on the other endpoints.

Stream events, each `event: <type>` + `data: <json>` with a rising `sequence_number`:
`response.created`, `response.in_progress` (a background response's: `response.created` and
`response.queued` with status `queued`, then `response.in_progress` with its first tokens: the
engine has computed its prompt); per reasoning item `response.output_item.added`,
`response.content_part.added`, `response.reasoning_text.delta`, `response.reasoning_text.done`,
`response.content_part.done`, `response.output_item.done`; per message `response.output_item.added`,
`response.content_part.added`, `response.output_text.delta` (with its tokens' logprobs where
asked for), `response.output_text.done`, `response.content_part.done`,
`response.output_item.done`; per call `response.output_item.added`,
`response.function_call_arguments.delta`, `response.function_call_arguments.done`,
`response.output_item.done`; last `response.completed` or `response.incomplete`.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from roseinfer.output.processor import ChoiceState
from roseinfer.outputs import PositionLogprobs, RequestFailed
from roseinfer.sampling_params import SamplingDefaults
from roseinfer.server.errors import failed_request_error, internal_error
from roseinfer.server.generation import GenerationGroup
from roseinfer.server.json_text import dumps
from roseinfer.server.logprobs import chat_logprobs
from roseinfer.server.responses_input import ResponsesRequest

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResponseHead:
    """What every Response object of one request holds beside its output."""

    id: str
    created_at: int
    model: str
    request: ResponsesRequest
    defaults: SamplingDefaults  # the server's values of what the request left out
    # The thinking read apart is an output item (`include_reasoning`, vLLM's; false: left out,
    # still counted in the usage's reasoning tokens)
    show_reasoning: bool = True

    def response(self, status: str, output: list[dict], usage: dict | None = None,
                 error: dict | None = None) -> dict:  # fmt: skip
        echo = self.request.echo
        incomplete = {"reason": "max_output_tokens"} if status == "incomplete" else None
        return {
            "id": self.id, "object": "response", "created_at": self.created_at,
            "status": status, "error": error, "incomplete_details": incomplete,
            "instructions": echo.instructions, "max_output_tokens": echo.max_output_tokens,
            "model": self.model, "output": output,
            "parallel_tool_calls": echo.parallel_tool_calls,
            "previous_response_id": echo.previous_response_id, "reasoning": None,
            "store": echo.store,
            "temperature": self.defaults.temperature if echo.temperature is None
            else echo.temperature,
            "top_p": self.defaults.top_p if echo.top_p is None else echo.top_p,
            "text": {"format": echo.text_format, "verbosity": "medium"},
            "tool_choice": echo.tool_choice,
            "tools": list(echo.tools), "top_logprobs": echo.top_logprobs,
            "truncation": echo.truncation, "usage": usage, "user": echo.user,
            "metadata": echo.metadata, "background": echo.background, "max_tool_calls": None,
            "conversation": {"id": echo.conversation} if echo.conversation else None,
            "service_tier": "default",  # one tier here
            "prompt_cache_key": echo.prompt_cache_key,
            "prompt_cache_retention": echo.prompt_cache_retention,
            "safety_identifier": echo.safety_identifier,
            # (the Response of a completed run is written once, as it completes)
            "completed_at": int(time.time()) if status == "completed" else None,
        }  # fmt: skip


def response_usage(group: GenerationGroup, prompt_tokens: int) -> dict:
    cached = sum(state.num_cached_tokens for state in group.states)
    output = group.num_output_tokens
    return {
        "input_tokens": prompt_tokens,
        # cache_write_tokens: OpenAI's explicit (billed) cache writes; here caching is automatic
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": group.reasoning_tokens},
        "total_tokens": prompt_tokens + output,
    }


def _item_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _logprobs(head: ResponseHead, group: GenerationGroup, ids: list[int],
              positions: list[PositionLogprobs]) -> list[dict]:  # fmt: skip
    """OpenAI's `output_text.logprobs` entries (chat's `logprobs.content`: the same fields)."""
    echo = head.request.echo
    if not echo.logprobs:
        return []
    tokenizer = group.states[0].tokenizer
    return chat_logprobs(ids, positions, echo.top_logprobs, tokenizer)["content"]


def _status(choice: ChoiceState) -> str:
    return "incomplete" if choice.finish_reason == "length" else "completed"


def _text_part(text: str, logprobs: list) -> dict:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": logprobs}


def _message(item_id: str, status: str, content: list[dict]) -> dict:
    return {"type": "message", "id": item_id, "status": status, "role": "assistant",
            "content": content}  # fmt: skip


def _reasoning_part(text: str) -> dict:
    return {"type": "reasoning_text", "text": text}


def _reasoning(item_id: str, status: str, text: str) -> dict:
    """A reasoning item as OpenAI's open-weight models' (and vLLM's): the thinking as its
    content, no summary."""
    return {"type": "reasoning", "id": item_id, "summary": [],
            "content": [_reasoning_part(text)], "encrypted_content": None, "status": status}  # fmt: skip


def _call(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}  # fmt: skip


def output_items(head: ResponseHead, group: GenerationGroup, choice: ChoiceState) -> list[dict]:
    """A finished answer's output items: its thinking (where some was read apart), its message
    (if it wrote text, or neither thought nor called), then its calls; the last one cut short
    where the answer was (as a stream closes them)."""
    items = []
    if head.show_reasoning and choice.reasoning and not choice.reasoning.isspace():
        # (a blank block: none, as llama.cpp)
        items.append(_reasoning(_item_id("rs"), "completed", choice.reasoning))
    if choice.text or not (choice.tool_calls or items):
        lp = _logprobs(head, group, choice.token_ids, list(choice.logprobs or []))
        items.append(_message(_item_id("msg"), "completed", [_text_part(choice.text, lp)]))
    for call in choice.tool_calls:
        items.append(_call(_item_id("fc"), call.id, call.name, call.arguments, "completed"))
    items[-1]["status"] = _status(choice)
    return items


def response_object(head: ResponseHead, group: GenerationGroup, prompt_tokens: int) -> dict:
    """A finished non-streamed Response."""
    ((_, choice),) = group.choices
    return head.response(_status(choice), output_items(head, group, choice),
                         response_usage(group, prompt_tokens))  # fmt: skip


@dataclass
class EventWriter:
    """SSE events with their sequence numbers, and the output items opened so far (what a
    background response's reader sees of it while it runs)."""

    seq: int = 0
    items: list[dict] = field(default_factory=list)  # done or open, in order
    open_item: dict | None = None  # the message or call being streamed
    status: str = "queued"  # the last status an event said: queued, in_progress, or its end

    def event(self, kind: str, **fields: Any) -> str:
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return f"event: {kind}\ndata: {dumps(data)}\n\n"


async def response_events(head: ResponseHead, group: GenerationGroup, prompt_tokens: int,
                          constraint_param: str | None, on_done: Callable[[dict], object],
                          w: EventWriter | None = None) -> AsyncIterator[str]:  # fmt: skip
    """The SSE events of a streamed Response (module docstring). Closing the stream aborts
    the generation. `constraint_param`: what a failure of the request's own doing names;
    `on_done`: given the last Response object (completed, incomplete or failed) before its
    event goes out; `w`: where the events' numbers and items are kept (a new one: None)."""
    w = EventWriter() if w is None else w
    want_logprobs = head.request.echo.logprobs
    if head.request.echo.background:  # (queued as the POST answered it, until its first tokens)
        yield w.event("response.created", response=head.response("queued", []))
        yield w.event("response.queued", response=head.response("queued", []))
    else:
        yield w.event("response.created", response=head.response("in_progress", []))

    def started() -> list[str]:
        if w.status != "queued":
            return []
        w.status = "in_progress"
        return [w.event("response.in_progress", response=head.response("in_progress", []))]

    if not head.request.echo.background:
        for line in started():
            yield line
    call_ids: dict[int, str] = {}  # call index -> its item id

    def close_open(status: str) -> list[str]:
        item, out = w.open_item, list[str]()
        if item is None:
            return out
        w.open_item = None
        index = len(w.items) - 1
        item["status"] = status
        if item["type"] in ("message", "reasoning"):
            part = item["content"][0]
            ref = {"item_id": item["id"], "output_index": index, "content_index": 0}
            if item["type"] == "message":
                out.append(w.event("response.output_text.done", **ref, text=part["text"],
                                   logprobs=part["logprobs"]))  # fmt: skip
            else:
                out.append(w.event("response.reasoning_text.done", **ref, text=part["text"]))
            out.append(w.event("response.content_part.done", **ref, part=part))
        else:
            out.append(w.event("response.function_call_arguments.done", item_id=item["id"],
                               output_index=index, name=item["name"],
                               arguments=item["arguments"]))  # fmt: skip
        out.append(w.event("response.output_item.done", output_index=index, item=item))
        return out

    def open_item(item: dict) -> list[str]:
        w.items.append(item)
        w.open_item = item
        index = len(w.items) - 1
        parted = item["type"] in ("message", "reasoning")
        added = {**item, "content": []} if parted else dict(item)
        out = [w.event("response.output_item.added", output_index=index, item=added)]
        if parted:
            part = _text_part("", []) if item["type"] == "message" else _reasoning_part("")
            out.append(w.event("response.content_part.added", item_id=item["id"],
                               output_index=index, content_index=0, part=part))  # fmt: skip
        return out

    blank = ""  # the thinking's blank space before its item opens (a blank block opens none)

    def reasoning_delta(text: str) -> list[str]:
        """The thinking's item opened (it comes first: nothing else is open) once its text is
        more than blank space, its text added."""
        nonlocal blank
        lines = []
        if w.open_item is None:
            if (blank + text).isspace():
                blank += text
                return []
            text, blank = blank + text, ""
            lines = open_item(_reasoning(_item_id("rs"), "in_progress", ""))
        item = w.open_item
        assert item is not None and item["type"] == "reasoning"
        item["content"][0]["text"] += text
        return lines + [w.event("response.reasoning_text.delta", item_id=item["id"],
                                output_index=len(w.items) - 1, content_index=0, delta=text)]  # fmt: skip

    def open_message() -> list[str]:
        """The message item, opened unless it is the one open (a call closes it)."""
        item = w.open_item
        if item is not None and item["type"] == "message":
            return []
        lines = close_open("completed")
        return lines + open_item(_message(_item_id("msg"), "in_progress", [_text_part("", [])]))

    def text_delta(text: str, logprobs: list[dict]) -> list[str]:
        message = w.open_item
        assert message is not None and message["type"] == "message"
        part = message["content"][0]
        part["text"] += text
        part["logprobs"] += logprobs
        return [w.event("response.output_text.delta", item_id=message["id"],
                        output_index=len(w.items) - 1, content_index=0, delta=text,
                        logprobs=logprobs)]  # fmt: skip

    async with group:
        try:
            choice: ChoiceState | None = None
            pending: list[dict] = []  # logprobs of tokens whose text is not out yet
            async for _, choice, text in group.events():
                for line in started():
                    yield line
                if choice.new_reasoning and head.show_reasoning:
                    for line in reasoning_delta(choice.new_reasoning):
                        yield line
                new = choice.new_logprobs if want_logprobs else []
                if new:
                    new_ids = choice.token_ids[len(choice.token_ids) - len(new) :]
                    pending += _logprobs(head, group, new_ids, new)
                if text:
                    for line in open_message():
                        yield line
                    for line in text_delta(text, pending):
                        yield line
                    pending = []
                for delta in choice.new_tool_calls:
                    if delta.id is not None:  # a new call
                        for line in close_open("completed"):
                            yield line
                        new_call = _call(_item_id("fc"), delta.id, delta.name or "", "",
                                         "in_progress")  # fmt: skip
                        call_ids[delta.index] = new_call["id"]
                        for line in open_item(new_call):
                            yield line
                    call = w.open_item
                    assert call is not None and call["id"] == call_ids[delta.index]
                    if delta.arguments:
                        call["arguments"] += delta.arguments
                        yield w.event("response.function_call_arguments.delta",
                                      item_id=call["id"], output_index=len(w.items) - 1,
                                      delta=delta.arguments)  # fmt: skip
            assert choice is not None and choice.finished
            status = _status(choice)
            if not w.items:  # nothing written and nothing called: an empty message
                for line in open_message():
                    yield line
            if pending:  # (logprobs come without tools: the last item is the message)
                for line in text_delta("", pending):
                    yield line
            for line in close_open(status):
                yield line
            final = head.response(status, w.items, response_usage(group, prompt_tokens))
            kind = "response.completed" if status == "completed" else "response.incomplete"
            w.status = status
            on_done(final)
            yield w.event(kind, response=final)
        except Exception as e:
            if isinstance(e, RequestFailed):
                error = head.request.renamed(failed_request_error(e, constraint_param))
            else:  # a bug while processing this request: it fails alone
                logger.exception("error while streaming %s", head.id)
                error = internal_error(e)
            # OpenAI's codes: the request's own doing is its prompt's, the rest the server's
            code = "invalid_prompt" if error.status == 400 else "server_error"
            failed = head.response(
                "failed", w.items, None, {"code": code, "message": error.message}
            )
            w.status = "failed"
            on_done(failed)
            yield w.event("response.failed", response=failed)
