"""OpenAI's answers of a `GenerationGroup` (generation.py): a chat or completions response's
JSON body, and its SSE stream of chunks (logprobs, echo, tool calls, reasoning, usage, and
llama.cpp's timings and prompt progress where asked for)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from roseinfer.output.processor import ChoiceState, RequestState
from roseinfer.outputs import PositionLogprobs, PromptProgress, RequestFailed
from roseinfer.server import protocol as P
from roseinfer.server.errors import failed_request_error, internal_error
from roseinfer.server.generation import GenerationGroup, sse_data
from roseinfer.server.json_text import (
    JsonText,
    dumps,
    dumps_in_pieces,
    joined_list,
    with_json_list,
)
from roseinfer.server.llamacpp_output import progress_json, timings
from roseinfer.server.logprobs import (
    TextPosition,
    chat_logprobs,
    completion_logprobs,
    prompt_logprobs_json,
)
from roseinfer.server.params import ResponseOptions

logger = logging.getLogger(__name__)


def response_body(group: GenerationGroup, choices: list[tuple[int, ChoiceState]],
                  opts: ResponseOptions, rid: str, created: int, model: str,
                  prompt_tokens: int) -> bytes:  # fmt: skip
    """The JSON of a finished non-streamed (chat) completion. Called on a worker thread: with n
    choices, `echo` and logprobs of a long prompt it is tens of megabytes (seconds of Python
    that would hold every other answer on the event loop), written a piece at a time
    (`dumps_in_pieces`: the JSON encoder holds the GIL for a whole call)."""
    prompts = _PromptParts(opts)
    out = [dumps_in_pieces(choice_json(group, index, c, opts, prompts)) for index, c in choices]
    use = group.usage(prompt_tokens, 0 if opts.echo_only else group.num_output_tokens)
    build = P.chat_response if opts.chat else P.completion_response
    response = build(rid, created, model, [], use)
    if opts.chat and opts.prompt_logprobs is not None:
        response["prompt_logprobs"] = prompts.prompt_logprobs(group.states[0])
    if opts.chat and opts.token_ids:
        response["prompt_token_ids"] = list(group.states[0].prompt_token_ids)
    return with_json_list(response, "choices", out).encode("utf-8")


class _PromptParts:
    """What a response writes of a prompt, made and written to JSON once for its n choices
    (16 choices of a 400-word prompt had written its logprobs 16 times: ~1 s of a 55 MB
    response, BENCHMARKS.md, session 50)."""

    def __init__(self, opts: ResponseOptions) -> None:
        self.opts = opts
        self._echo: dict[str, tuple[str, dict | None]] = {}
        self._echo_json: dict[str, str] = {}
        self._echo_logprobs_json: dict[str, dict[str, str]] = {}
        self._prompt_logprobs: dict[str, JsonText] = {}

    def echo(self, state: RequestState) -> tuple[str, dict | None]:
        """`echo`'s prompt text and, with `logprobs`, its tokens' (text offsets from 0)."""
        if state.request_id not in self._echo:
            text, positions = echoed_prompt(state)
            logprobs = None
            if self.opts.logprobs is not None:
                logprobs = completion_logprobs(
                    state.prompt_token_ids,
                    positions,
                    self.opts.logprobs,
                    state.tokenizer,
                    as_ids=self.opts.tokens_as_ids,
                ).json
            self._echo[state.request_id] = text, logprobs
        return self._echo[state.request_id]

    def echo_choice_json(self, state: RequestState, index: int, fields: str = "") -> str:
        """A streamed choice's first chunk's choice, as JSON, `fields` (JSON members and a
        comma) after its index: the prompt's text and logprobs are written once for the n
        choices (n x a long prompt's logprobs had been written on the event loop, seconds
        with n = 128)."""
        if state.request_id not in self._echo_json:
            text, logprobs = self.echo(state)
            whole = dumps(P.completion_choice(0, text, None, logprobs))
            assert whole.startswith('{"index":0,')
            self._echo_json[state.request_id] = whole[len('{"index":0,') :]
        return f'{{"index":{index},{fields}' + self._echo_json[state.request_id]

    def echo_logprobs_json(self, state: RequestState) -> dict[str, str]:
        """`echo`'s logprobs of the prompt's tokens, each key's list as JSON."""
        if state.request_id not in self._echo_logprobs_json:
            _, logprobs = self.echo(state)
            assert logprobs is not None
            self._echo_logprobs_json[state.request_id] = {
                key: dumps_in_pieces(items) for key, items in logprobs.items()
            }
        return self._echo_logprobs_json[state.request_id]

    def prompt_logprobs(self, state: RequestState) -> JsonText:
        """vLLM's `prompt_logprobs` of the prompt, as JSON."""
        assert self.opts.prompt_logprobs is not None
        if state.request_id not in self._prompt_logprobs:
            records = prompt_logprobs_json(
                state.prompt_token_ids, state.prompt_logprobs or [], self.opts.prompt_logprobs
            )
            self._prompt_logprobs[state.request_id] = JsonText(dumps_in_pieces(records))
        return self._prompt_logprobs[state.request_id]


def choice_json(group: GenerationGroup, index: int, choice: ChoiceState, opts: ResponseOptions,
                prompts: _PromptParts) -> dict:  # fmt: skip
    """A finished choice of a non-streamed response."""
    state = group.state_of(index)
    tokenizer = state.tokenizer
    if opts.chat:
        logprobs = None
        if opts.logprobs is not None and choice.logprobs is not None:
            logprobs = chat_logprobs(choice.token_ids, choice.logprobs, opts.logprobs, tokenizer,
                                     opts.tokens_as_ids, opts.listed_logprobs)  # fmt: skip
        calls = [P.tool_call(c.id, c.name, c.arguments) for c in choice.tool_calls]
        use = group.tool_use  # an answer that must call has no content, called or cut short
        content: str | None = None if use is not None and use.must_call else choice.text
        if choice.reasoning is not None and not content:  # thought, answered nothing (vLLM)
            content = None
        if opts.echoed_message:
            content = opts.echoed_message + (content or "")
        out = P.chat_choice(index, content, choice.finish_reason, logprobs, calls)
        if opts.show_reasoning:
            out["message"]["reasoning"] = out["message"]["reasoning_content"] = choice.reasoning
        if opts.token_ids:
            out["token_ids"] = list(choice.token_ids)
        return out
    text, ids, finish = choice.text, choice.token_ids, choice.finish_reason
    positions: list[PositionLogprobs | None] = list(choice.logprobs or [])
    if opts.echo_only:
        text, ids, positions, finish = "", [], [], "length"
    prompt_text, prompt_lp = prompts.echo(state) if opts.echo else ("", None)
    out = P.completion_choice(index, prompt_text + text, finish)
    if opts.logprobs is not None:
        # The prompt's text and the output's are decoded apart: the output starts after the
        # prompt's last character, even one its bytes left incomplete (then U+FFFD).
        start = TextPosition(len(prompt_text))
        lp = completion_logprobs(ids, positions, opts.logprobs, tokenizer, start,
                                 opts.tokens_as_ids, opts.listed_logprobs).json  # fmt: skip
        if prompt_lp is not None:  # the prompt's tokens first
            heads = prompts.echo_logprobs_json(state)
            lp = {key: joined_list(heads[key], dumps_in_pieces(lp[key])) for key in lp}
        out["logprobs"] = lp
    if opts.prompt_logprobs is not None:
        out["prompt_logprobs"] = prompts.prompt_logprobs(state)
    if opts.token_ids:
        out["prompt_token_ids"], out["token_ids"] = list(state.prompt_token_ids), list(ids)
    return out


def echoed_prompt(state: RequestState) -> tuple[str, list[PositionLogprobs | None]]:
    """`echo`'s prompt: its text, special tokens included (the prompt as sent, and the text
    its logprobs' tokens and offsets describe), and its tokens' logprobs (None where not asked
    for)."""
    ids = state.prompt_token_ids
    text = state.tokenizer.decode(ids, skip_special_tokens=False)
    return text, list(state.prompt_logprobs or [None] * len(ids))


async def sse_stream(group: GenerationGroup, rid: str, created: int, model: str,
                     opts: ResponseOptions, prompt_tokens: int,
                     include_usage: bool) -> AsyncIterator[str]:  # fmt: skip
    """SSE chunks of a streamed (chat) completion, then `data: [DONE]`.

    Chat streams open each choice with a `{"role": "assistant", "content": ""}` delta (null
    content where the answer calls, sent with its first chunk of text or calls where it may
    call or write; with `echo`, the content is the last message's text); completions with
    `echo` open each with the prompt's text (and its logprobs). A chunk goes out when a choice
    has new text, new logprobs, tool-call deltas or finishes (its last chunk carries the
    finish_reason); with `include_usage` a last chunk has no choices and the usage. An error
    becomes an `{"error": ...}` event. Closing the stream aborts what is still running.
    """
    chat = opts.chat
    obj = "chat.completion.chunk" if chat else "text_completion"
    offsets: dict[int, TextPosition] = {}  # completions: where each choice's next token starts
    prompts = _PromptParts(opts)

    sent_ids: dict[int, int] = {}  # return_token_ids: each choice's output ids sent

    def chunk(choice: dict, c: ChoiceState | None = None) -> str:
        """A chunk of `choice`, `c` the choice as it stands where it carries output."""
        out = P.chunk(rid, obj, created, model, [choice], include_usage)
        index = choice["index"]
        if opts.token_ids:
            first = "role" in choice["delta"] if chat else index not in sent_ids
            if first:  # a chat choice's opening (the response's), a completion's first chunk
                prompt = list(group.state_of(index).prompt_token_ids)
                (out if chat else choice)["prompt_token_ids"] = prompt
            ids = [] if c is None or opts.echo_only else c.token_ids
            choice["token_ids"] = ids[sent_ids.get(index, 0) :]
            sent_ids[index] = max(len(ids), sent_ids.get(index, 0))
        if opts.continuous_usage:
            done = 0 if c is None or opts.echo_only else len(c.token_ids)
            out["usage"] = P.usage(len(group.state_of(index).prompt_token_ids), done)
        if opts.timings and c is not None:  # (llama.cpp's webui reads its speed from these)
            out["timings"] = timings(group.state_of(index), c, len(c.token_ids))
        return sse_data(out)

    def completion_lp(index: int, ids: list[int], positions: list) -> dict | None:
        if opts.logprobs is None:
            return None
        tokenizer = group.state_of(index).tokenizer
        start = offsets.get(index, TextPosition())
        lp = completion_logprobs(ids, positions, opts.logprobs, tokenizer, start,
                                 opts.tokens_as_ids, opts.listed_logprobs)  # fmt: skip
        offsets[index] = lp.end
        return lp.json

    # A call answer opens with content null, as OpenAI's (a text answer with ""). Where the
    # answer may call or write (tools under "auto"), or think first (a reasoning parser), a
    # choice's opening waits for its first chunk of text, calls or reasoning, which says which
    # it is (as the answer not streamed has null or text); chunks of logprobs alone before it
    # wait with it.
    use = group.tool_use
    undecided: set[int] = set()
    held: dict[int, list[str]] = {}  # their chunks of logprobs alone, sent after the opening

    def opening(index: int, content: str | None) -> str:
        return chunk(P.chat_chunk_choice(index, {"role": "assistant", "content": content}, None))

    async with group:
        try:
            if chat:
                for index, _ in group.choices:
                    if opts.echoed_message:  # the answer has content: it opens with that
                        yield opening(index, opts.echoed_message)
                    elif (use is not None and not use.must_call) or group.reasoning is not None:
                        undecided.add(index)
                    else:
                        yield opening(index, None if use is not None else "")
            prompts_sent: set[int] = set()
            progress_sent: dict[str, PromptProgress] = {}
            async for index, c, text in group.events():
                state = group.state_of(index)
                progress = state.prompt_progress if opts.progress else None
                if progress is not None and progress_sent.get(state.request_id) is not progress:
                    progress_sent[state.request_id] = progress  # (a prompt's, not a choice's)
                    yield progress_chunk(rid, obj, created, model, progress, include_usage)
                if opts.echo and index not in prompts_sent:
                    prompts_sent.add(index)
                    # made and written once for the prompt's n choices, off the loop (its
                    # logprobs are prompt x top N entries)
                    fields = ""
                    if opts.token_ids:  # the prompt's ids in the choice's first chunk
                        sent_ids[index] = 0
                        prompt_ids = dumps(list(state.prompt_token_ids))
                        fields = f'"prompt_token_ids":{prompt_ids},"token_ids":[],'
                    choice_text = await asyncio.to_thread(prompts.echo_choice_json, state, index,
                                                          fields)  # fmt: skip
                    offsets[index] = TextPosition(len(prompts.echo(state)[0]))
                    envelope = P.chunk(rid, obj, created, model, [], include_usage)
                    if opts.continuous_usage:
                        envelope["usage"] = P.usage(len(state.prompt_token_ids), 0)
                    yield sse_data(with_json_list(envelope, "choices", [choice_text]))
                new = c.new_logprobs if opts.logprobs is not None else []
                if opts.echo_only:  # the prompt alone: its one generated token left out
                    if not c.finished:
                        continue
                    text, new = "", []
                calls = [P.tool_call_delta(d.index, d.id, d.name, d.arguments)
                         for d in c.new_tool_calls]  # fmt: skip
                thought = c.new_reasoning if opts.show_reasoning else ""
                if not (text or thought or new or calls or c.finished):
                    continue
                new_ids = c.token_ids[len(c.token_ids) - len(new) :] if new else []
                if chat:
                    logprobs = None
                    if opts.logprobs is not None:
                        logprobs = chat_logprobs(new_ids, new, opts.logprobs, state.tokenizer,
                                                 opts.tokens_as_ids, opts.listed_logprobs)  # fmt: skip
                    delta: dict = (
                        {"reasoning": thought, "reasoning_content": thought} if thought else {}
                    )
                    if text:
                        delta["content"] = text
                    if calls:
                        delta["tool_calls"] = calls
                    piece = chunk(P.chat_chunk_choice(index, delta, c.finish_reason, logprobs), c)
                    if index in undecided:
                        if not (text or thought or calls or c.finished):  # logprobs say neither
                            held.setdefault(index, []).append(piece)
                            continue
                        undecided.discard(index)
                        # (thinking first: null, which text after it replaces, as a call keeps)
                        thought_any = c.reasoning is not None  # (an empty thinking too)
                        yield opening(index, None if (calls or thought_any) and not text else "")
                        for earlier in held.pop(index, ()):
                            yield earlier
                    yield piece
                else:
                    finish = "length" if opts.echo_only else c.finish_reason
                    choice = P.completion_choice(index, text, finish,
                                                 completion_lp(index, new_ids, new))  # fmt: skip
                    yield chunk(choice, c)
            if include_usage:
                final = P.chunk(rid, obj, created, model, [], False)
                final["usage"] = group.usage(prompt_tokens,
                                         0 if opts.echo_only else group.num_output_tokens)  # fmt: skip
                yield sse_data(final)
        except RequestFailed as e:
            yield sse_data(failed_request_error(e, opts.constraint_param).body())
        except Exception as e:  # a bug while processing this request: fail it alone
            logger.exception("error while streaming %s", rid)
            yield sse_data(internal_error(e).body())
        yield sse_data("[DONE]")


def progress_chunk(rid: str, obj: str, created: int, model: str, progress: PromptProgress,
                   include_usage: bool) -> str:  # fmt: skip
    """llama.cpp's `return_progress` event: a chunk without choices whose `prompt_progress`
    says how far a prompt is computed (`processed` counts its cached tokens too, as
    llama.cpp's)."""
    out = P.chunk(rid, obj, created, model, [], include_usage)
    out["prompt_progress"] = progress_json(progress)
    return sse_data(out)
