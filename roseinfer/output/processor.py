"""The one place where generated token ids become what a client reads.

Every front door (`LLM`, `EngineClient` for the server, the seeds' wrappers, the CLI) keeps one
`RequestState` per request and feeds it the engine's tokens; it does the rest, the same way
for all of them:

- incremental detokenization (`IncrementalDetokenizer`, O(1) per token);
- finish reasons. The text of the token that stopped a choice (EOS, a stop token id) is not
  part of its text, as in vLLM and OpenAI (unless `include_stop_str_in_output`, as in vLLM);
  its id is in `token_ids`;
- logprobs: the engine's `TokenLogprobs` named by their tokens' text (`PositionLogprobs`);
- a reasoning model's thinking (`ReasoningParser`, the server's `--reasoning-parser`), read
  apart from the text after the stop strings: `reasoning`, and the rest the answer;
- tool calls (`ToolCallParser`), read from the answer's text: their blocks
  leave the content and become `tool_calls`; a choice that called tools and stopped finishes
  with "tool_calls" ("stop" where the request named the function, as OpenAI's);
- stop strings with the hold-back streaming needs (`StopStringChecker`): text that could still
  become a stop string is held until the next piece decides; a matched stop string and what
  follows it never reach the client (`include_stop_str_in_output`: the stop string does, and
  nothing is held). A match finishes the choice with reason "stop" and `stopped_by_string`;
- llama.cpp's ends of a code completion (`LineEnd`: `min_indent`, the newline time limit),
  on the released text: reason "length".

A choice these end is `ended_early`: the front door aborts its sequence in the engine.

Where it runs is the front door's choice: `LLM` right after each engine step, the server on
its event loop (off the engine thread, so detokenizing never lengthens a step).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roseinfer.output.detokenizer import IncrementalDetokenizer
from roseinfer.output.line_end import LineEnd
from roseinfer.output.reasoning import ReasoningParser, ReasoningParserName, prompt_end
from roseinfer.output.stop import StopStringChecker
from roseinfer.output.tool_calls import ParseMode, ToolCallDelta, ToolCallParser
from roseinfer.outputs import (
    CompletionOutput,
    FinishReason,
    Logprob,
    PositionLogprobs,
    PromptProgress,
    RequestMetrics,
    RequestOutput,
    TokenLogprobs,
    ToolCall,
)
from roseinfer.sampling_params import SamplingParams
from roseinfer.structured.tools import ToolUse
from roseinfer.tokenizer import Tokenizer

if TYPE_CHECKING:
    from roseinfer.engine.llm_engine import LLMEngine, StepOutput
    from roseinfer.pooling_params import PoolingParams

logger = logging.getLogger(__name__)

__all__ = ["ChoiceState", "OutputProcessor", "RequestState", "TextDelta", "position_logprobs"]


def position_logprobs(tokenizer: Tokenizer, record: TokenLogprobs) -> PositionLogprobs:
    """vLLM's shape: the position's token first, then the top N (or the listed tokens) that are
    not it."""
    out = {
        record.token_id: Logprob(record.logprob, record.rank, tokenizer.token_text(record.token_id))
    }
    ranks = record.top_ranks or range(1, len(record.top) + 1)
    for rank, (token_id, logprob) in zip(ranks, record.top, strict=True):
        if token_id not in out:
            out[token_id] = Logprob(logprob, rank, tokenizer.token_text(token_id))
    return out


class ChoiceState:
    """One choice of a request: its text so far, token ids and finish."""

    def __init__(
        self,
        index: int,
        prompt_token_ids: Sequence[int],
        params: SamplingParams,
        tokenizer: Tokenizer,
        stop_token_ids: frozenset[int],
        tool_use: ToolUse | None = None,
        reasoning: ReasoningParserName | None = None,
    ) -> None:
        """`tool_use`: the request's tools, whose calls are read from the text (None: none);
        `reasoning`: the format its thinking is read apart in (None: none)."""
        self.index = index
        self.max_tokens = params.max_tokens
        self.min_tokens = params.min_tokens
        self.tokenizer = tokenizer
        self.detok = IncrementalDetokenizer(tokenizer, params.skip_special_tokens)
        self.detok.start_prompt(prompt_token_ids)
        # vLLM's include_stop_str_in_output: the stop string, or the stop token's text, kept
        self.keeps_stop = params.include_stop_str_in_output
        self.stop = (
            StopStringChecker(params.stop, params.include_stop_str_in_output)
            if params.stop
            else None
        )
        self.line_end = None
        if params.min_indent or params.stop_at_newline_after_ms is not None:
            self.line_end = LineEnd(params.min_indent, params.stop_at_newline_after_ms)
        eos_ids = frozenset() if params.ignore_eos else stop_token_ids
        # a request's stop id names why it ended (`stop_reason`) unless it is an end of sequence
        # too, which ends it first (vLLM's: stop_reason None)
        self.request_stop_ids = params.stop_token_id_set - eos_ids
        self.stop_ids = params.stop_token_id_set | eos_ids
        self.pieces: list[str] = []
        self.token_ids: list[int] = []
        self.finish_reason: FinishReason | None = None
        self.stop_reason: str | int | None = None
        self.stopped_by_string = False
        # ended here, not by the engine (a stop string, `min_indent`, the newline time limit):
        # the front door aborts its sequence
        self.ended_early = False
        self.error: str | None = None  # why the engine failed this choice
        self.first_token_time: float | None = None
        self.finish_time: float | None = None
        # With params.logprobs: one per token of token_ids; `new_logprobs` the last feed's.
        self.logprobs: list[PositionLogprobs] | None = [] if params.logprobs is not None else None
        self.new_logprobs: list[PositionLogprobs] = []
        self.cumulative_logprob = 0.0
        self.tools = None
        # OpenAI's finish reason of an answer that called tools: "tool_calls", but "stop"
        # where the request named the function (its call is the answer, not a turn to take)
        self.calls_finish: FinishReason = "tool_calls"
        if tool_use is not None:
            mode: ParseMode = "calls" if tool_use.must_call else "text"
            if tool_use.answer_schema is not None:
                mode = "calls_or_answer"
            self.tools = ToolCallParser(tool_use.names, mode)
            self.calls_finish = "stop" if tool_use.choice == "named" else "tool_calls"
        self.new_tool_calls: list[ToolCallDelta] = []  # the last feed's
        self.thinking = None
        if reasoning is not None:  # (the prompt's end: a block it opened or closed)
            self.thinking = ReasoningParser(reasoning, prompt_end(tokenizer, prompt_token_ids))
        self.reasoning_pieces: list[str] = []
        self.new_reasoning = ""  # the last feed's
        # tokens of the feeds that thought (within one feed: the one that ends the thinking)
        self.reasoning_tokens = 0

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [] if self.tools is None else self.tools.calls

    @property
    def reasoning(self) -> str | None:
        """The thinking read apart so far (None: no parser, or none read as reasoning)."""
        if self.thinking is None or not self.thinking.thought:
            return None
        return "".join(self.reasoning_pieces)

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def feed(
        self,
        token_ids: Sequence[int],
        finish_reason: FinishReason | None,
        logprobs: Sequence[TokenLogprobs] | None = None,
    ) -> str:
        """Add the engine's new tokens (the last ones of the choice when `finish_reason` is
        set) and their logprobs (one per token); returns the text they make final. Token by
        token, so a stop string ends the choice at the token that completes it, however many
        came in one event (`stream_interval`): the ones after it are dropped. Nothing changes
        once the choice finished."""
        if self.finished:
            return ""
        if token_ids and self.first_token_time is None:
            self.first_token_time = time.perf_counter()
        self.new_logprobs = []
        pieces = []
        last = len(token_ids) - 1
        for i, token in enumerate(token_ids):
            self.token_ids.append(token)
            if self.logprobs is not None and logprobs:
                self._add_logprobs(logprobs[i])
            if i == last and finish_reason == "stop" and token in self.stop_ids:
                if token in self.request_stop_ids:
                    self.stop_reason = token
                if not self.keeps_stop:
                    break  # the stop token's text is not output
            piece = self.detok.on_token(token)
            if self.stop is not None:
                # vLLM's rule: no stop string ends within the first min_tokens tokens
                piece, matched = self.stop.feed(piece, len(self.token_ids) > self.min_tokens)
                if matched:
                    pieces.append(self._line_end(piece)[0])
                    self.stopped_by_string = self.ended_early = True
                    self.stop_reason = self.stop.matched
                    finish_reason = "stop"
                    break
            piece, ended = self._line_end(piece)
            pieces.append(piece)
            if ended:
                self.ended_early = True
                finish_reason = "length"
                break
        if finish_reason is not None and not self.ended_early:
            tail = self.detok.flush()
            if self.stop is not None:
                tail, matched = self.stop.feed(tail, len(self.token_ids) > self.min_tokens)
                if matched:
                    self.stopped_by_string = self.ended_early = True
                    self.stop_reason = self.stop.matched
                    finish_reason = "stop"
                else:
                    tail += self.stop.flush()
            tail, ended = self._line_end(tail)
            if ended and finish_reason == "stop":  # (a cut line: not the stop string's end)
                finish_reason = "length"
            pieces.append(tail)
        text = "".join(pieces)
        if self.thinking is not None:
            was_thinking = self.thinking.phase == "thinking"
            had_thought = self.thinking.thought
            self.new_reasoning, text = self.thinking.feed(text, finish_reason is not None)
            if self.new_reasoning:
                self.reasoning_pieces.append(self.new_reasoning)
            opened = self.thinking.thought and not had_thought  # (and maybe closed: one feed)
            if was_thinking or opened or self.thinking.phase == "thinking":
                self.reasoning_tokens += len(token_ids)
        if self.tools is not None:
            text, self.new_tool_calls = self.tools.feed(text, finish_reason is not None)
            if finish_reason == "stop" and self.tools.calls and not self.tools.cut_short:
                finish_reason = self.calls_finish  # a call cut by a stop string or id: "stop"
        if text:
            self.pieces.append(text)
        if finish_reason is not None:
            self.finish_reason = finish_reason
            self.finish_time = time.perf_counter()
        return text

    def _line_end(self, text: str) -> tuple[str, bool]:
        """`min_indent` and the newline time limit on text about to be released."""
        if self.line_end is None or not text:
            return text, False
        assert self.first_token_time is not None
        return self.line_end.feed(text, time.perf_counter() - self.first_token_time)

    def feed_or_fail(
        self,
        token_ids: Sequence[int],
        finish_reason: FinishReason | None,
        logprobs: Sequence[TokenLogprobs] | None = None,
    ) -> str | None:
        """`feed`, where an exception (a bug in detokenizing, stop strings or the tool parser)
        fails this choice alone: None, the choice finished with reason "error". The front
        door then stops the choice in the engine."""
        try:
            return self.feed(token_ids, finish_reason, logprobs)
        except Exception as e:
            logger.exception("output processing failed")
            self.fail(f"output processing failed: {type(e).__name__}: {e}")
            return None

    def _add_logprobs(self, record: TokenLogprobs) -> None:
        assert self.logprobs is not None
        position = position_logprobs(self.tokenizer, record)
        self.new_logprobs.append(position)
        self.logprobs.append(position)
        self.cumulative_logprob += record.logprob

    def fail(self, error: str | None = None) -> None:
        """The engine failed this choice: it ends with reason "error"."""
        self.error = error
        if not self.finished:
            self.finish_reason = "error"
            self.finish_time = time.perf_counter()

    def output(self) -> CompletionOutput:
        logprobs = None if self.logprobs is None else list(self.logprobs)
        return CompletionOutput(
            self.index,
            self.text,
            list(self.token_ids),
            self.finish_reason,
            self.stop_reason,
            logprobs,
            None if logprobs is None else self.cumulative_logprob,
            None if self.tools is None else list(self.tools.calls),
            self.error,
        )


class RequestState:
    """A request's `n` choices, read into `RequestOutput`s."""

    def __init__(
        self,
        request_id: str,
        prompt_token_ids: Sequence[int],
        params: SamplingParams,
        tokenizer: Tokenizer,
        stop_token_ids: Iterable[int] = (),
        tool_use: ToolUse | None = None,
        reasoning: ReasoningParserName | None = None,
    ) -> None:
        """`stop_token_ids`: the model's EOS / end-of-turn ids (`Tokenizer.stop_token_ids`);
        `tool_use`: the request's tools, whose calls are read from the text (None: none);
        `reasoning`: the format its thinking is read apart in (None: none)."""
        self.request_id = request_id
        self.prompt_token_ids = list(prompt_token_ids)
        self.params = params
        self.arrival_time = time.perf_counter()
        self.num_cached_tokens = 0
        # how far the prompt is computed, where the request asked to be told (`report_progress`)
        self.prompt_progress: PromptProgress | None = None
        self.tokenizer = tokenizer
        # With params.prompt_logprobs: None for the first prompt token, then one per token.
        self.prompt_logprobs: list[PositionLogprobs | None] | None = None
        stop_ids = frozenset(stop_token_ids)
        self.choices = [
            ChoiceState(i, self.prompt_token_ids, params, tokenizer, stop_ids, tool_use, reasoning)
            for i in range(params.n)
        ]

    @property
    def finished(self) -> bool:
        return all(c.finished for c in self.choices)

    @property
    def num_output_tokens(self) -> int:
        return sum(len(c.token_ids) for c in self.choices)

    def set_prompt_logprobs(self, records: Sequence[TokenLogprobs]) -> None:
        """The engine's records of prompt tokens 1.. (the first token has no context)."""
        self.prompt_logprobs = [None] + [position_logprobs(self.tokenizer, r) for r in records]

    def output(self) -> RequestOutput:
        first = min((c.first_token_time for c in self.choices if c.first_token_time), default=None)
        last = max((c.finish_time for c in self.choices if c.finish_time), default=None)
        start = self.arrival_time
        metrics = RequestMetrics(
            ttft=(first or start) - start,
            e2e_latency=(last or start) - start,
            num_cached_tokens=self.num_cached_tokens,
        )
        return RequestOutput(
            self.request_id,
            self.prompt_token_ids,
            [c.output() for c in self.choices],
            self.finished,
            metrics,
            self.prompt_logprobs,
        )


@dataclass(frozen=True, slots=True)
class TextDelta:
    """What one engine step added to one choice."""

    state: RequestState
    index: int
    token_id: int | None  # None: the engine failed the choice
    text: str  # the text this token made final ('' while held back)
    finished: bool  # the choice is done (its last delta)


class OutputProcessor:
    """The request states of a synchronous front door (`LLM`, the seeds' schedulers, the CLI):
    `step()` runs one engine step and feeds every new token to its request. Embedding requests
    have no text: their one output is kept in `pooled` (None until it comes)."""

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine
        self.states: dict[str, RequestState] = {}
        self.pooled: dict[str, StepOutput | None] = {}

    def add_pooling_request(
        self, request_id: str, prompt_token_ids: Sequence[int], pooling: PoolingParams
    ) -> None:
        """Queue an embedding request (InvalidRequestError queues nothing); its output lands
        in `pooled[request_id]`."""
        self.engine.add_pooling_request(request_id, prompt_token_ids, pooling)
        self.pooled[request_id] = None

    def add_request(
        self,
        request_id: str,
        prompt_token_ids: Sequence[int],
        params: SamplingParams,
        tool_use: ToolUse | None = None,
    ) -> RequestState:
        """Queue a request in the engine (InvalidRequestError queues nothing) and track it;
        `tool_use`: the request's tools, whose calls are read from its text."""
        self.engine.add_request(request_id, prompt_token_ids, params)
        state = RequestState(request_id, prompt_token_ids, params, self.engine.tokenizer,
                             self.engine.stop_token_ids, tool_use)  # fmt: skip
        self.states[request_id] = state
        return state

    def step(self) -> list[TextDelta]:
        deltas = []
        for out in self.engine.step():
            if out.request_id in self.pooled:
                self.pooled[out.request_id] = out
                continue
            state = self.states.get(out.request_id)
            if state is None:  # forgotten by the front door
                continue
            if out.index == 0:  # the choice that computed the prompt (the others wait for it)
                state.num_cached_tokens = out.num_cached_tokens
            if out.prompt_logprobs is not None:
                state.set_prompt_logprobs(out.prompt_logprobs)
            choice = state.choices[out.index]
            if choice.finished:  # e.g. a stop string matched: its abort is on its way
                continue
            if out.token_id is None:  # the engine failed this choice alone
                choice.fail(out.error)
                deltas.append(TextDelta(state, out.index, None, "", True))
                continue
            logprobs = None if out.logprobs is None else (out.logprobs,)
            text = choice.feed_or_fail((out.token_id,), out.finish_reason, logprobs)
            if text is None:  # this choice alone fails
                if not out.finished:
                    self.engine.abort_request(out.request_id, "error", out.index)
                deltas.append(TextDelta(state, out.index, None, "", True))
                continue
            if choice.ended_early and not out.finished:
                self.engine.abort_request(out.request_id, choice.finish_reason or "stop", out.index)
            deltas.append(TextDelta(state, out.index, out.token_id, text, choice.finished))
        return deltas

    def abort(self, request_id: str) -> None:
        """End a request now (its blocks are freed) and stop tracking it."""
        self.engine.abort_request(request_id)
        self.pooled.pop(request_id, None)
        state = self.states.pop(request_id, None)
        if state is not None:
            for choice in state.choices:
                choice.feed_or_fail((), "abort")
