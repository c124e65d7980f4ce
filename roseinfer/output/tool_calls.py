"""Tool calls read back from a choice's text as it streams (the format: roseinfer/structured/
tools.py).

`ToolCallParser.feed` splits the text into content and tool-call deltas. A call's first delta
carries its id and name as soon as `{"name": "...", "arguments": ` is written, then the
arguments stream as the model writes them (a small JSON scanner knows where they end), so the
concatenated fragments are exactly the final `arguments` string. Text that could still become
`<tool_call>` is held back, as are trailing spaces and newlines, which are dropped before a call
and at the end of an answer that called tools (as are those right after a call): streamed or
not, the content is the same.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Literal

from roseinfer.outputs import ToolCall
from roseinfer.structured.tools import TOOL_CALL_CLOSE, TOOL_CALL_OPEN

# What the grammar lets the model write ("answer": a calls_or_answer parser past its first
# character, which was not a call's).
ParseMode = Literal["text", "calls", "calls_or_answer", "answer"]
# A call's opening up to its arguments object, in the order the grammar writes them.
_HEADER = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*(?=\{)')


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """What a feed added to call `index`: its id and name in its first delta, fragments of
    the arguments in that one and the next."""

    index: int
    id: str | None
    name: str | None
    arguments: str


class _OpenCall:
    """A call whose `</tool_call>` has not come yet."""

    def __init__(self, spaces_before: str) -> None:
        self.spaces_before = spaces_before  # the content's, given back if this is no call
        self.text = ""  # between the tags
        self.id: str | None = None  # set once the header is streamed
        self.name = ""
        self.args_start = -1  # in text
        self.scanned = 0  # chars of the arguments scanned (and streamed)
        self.args_end = -1  # in text, once the arguments object closed
        self.depth, self.in_string, self.escaped = 0, False, False

    def stream(self, names: frozenset[str], index: int) -> list[ToolCallDelta]:
        out = []
        if self.id is None:
            header = _HEADER.match(self.text)
            if header is None:
                return []
            name = json.loads(f'"{header.group(1)}"')
            if name not in names:
                return []  # not a call of ours: read whole at the close
            self.id, self.name, self.args_start = new_call_id(), name, header.end()
            out.append(ToolCallDelta(index, self.id, name, ""))
        if self.args_end < 0:
            start = self.args_start + self.scanned
            end = self._scan(start)
            if end > start:
                out.append(ToolCallDelta(index, None, None, self.text[start:end]))
        return out

    def _scan(self, start: int) -> int:
        """Advance the scanner over text[start:]; returns where the arguments' text ends so far."""
        text, pos = self.text, start
        while pos < len(text):
            ch = text[pos]
            pos += 1
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch in "{[":
                self.depth += 1
            elif ch in "}]":
                self.depth -= 1
                if self.depth == 0:
                    self.args_end = pos
                    break
        self.scanned = pos - self.args_start
        return pos

    @property
    def arguments(self) -> str:
        return self.text[self.args_start : self.args_start + self.scanned]


class ToolCallParser:
    """One choice's tool calls among the functions `names`."""

    def __init__(self, names: frozenset[str], mode: ParseMode = "text") -> None:
        """`mode`, what the grammar lets the model write:
        - "text" (tool_choice auto): free text in which `<tool_call>` opens a call;
        - "calls" (required, a named function): nothing but calls, so whatever is not a call
          (what a cut left of one) is no content either;
        - "calls_or_answer" (auto beside response_format): calls, or a JSON answer whose
          first character tells which ("<" opens a call; a JSON answer is content whole, a
          `<tool_call>` inside one of its strings included)."""
        self.names = names
        self.mode = mode
        self.calls: list[ToolCall] = []
        self._buffer = ""  # text not yet decided: a partial tag
        self._spaces = ""  # trailing whitespace of the content, held back
        self._after_call = False  # whitespace right after a call is not content either
        self._open: _OpenCall | None = None
        # A call's arguments were cut before they closed (max_tokens, a stop string): the
        # call stands, its `arguments` not valid JSON.
        self.cut_short = False

    def feed(self, text: str, final: bool) -> tuple[str, list[ToolCallDelta]]:
        """(content, tool-call deltas) of the choice's next text; `final` at its end."""
        if self.mode == "calls_or_answer" and text:
            self.mode = "calls" if text.startswith("<") else "answer"
        if self.mode == "answer":
            return text, []
        self._buffer += text
        content: list[str] = []
        deltas: list[ToolCallDelta] = []
        while True:
            call = self._open
            if call is None:
                i = self._buffer.find(TOOL_CALL_OPEN)
                if i < 0:
                    keep = 0 if final else _partial_suffix(self._buffer, TOOL_CALL_OPEN)
                    content.append(self._content(self._buffer[: len(self._buffer) - keep]))
                    self._buffer = self._buffer[len(self._buffer) - keep :]
                    break
                content.append(self._content(self._buffer[:i]))
                self._open = _OpenCall(self._spaces)  # whitespace before a call is not content
                self._spaces = ""
                self._buffer = self._buffer[i + len(TOOL_CALL_OPEN) :]
                continue
            # The call's text runs to its close tag, which counts only past the arguments
            # (a string argument may hold "</tool_call>"): scan them first.
            call.text += self._buffer
            self._buffer = ""
            deltas += call.stream(self.names, len(self.calls))
            start = 0 if call.id is None else call.args_end  # -1: arguments still open
            j = call.text.find(TOOL_CALL_CLOSE, start) if start >= 0 else -1
            closed = j >= 0
            if closed:
                self._buffer = call.text[j + len(TOOL_CALL_CLOSE) :]
                call.text = call.text[:j]
            if not (closed or final):
                break
            read, delta = self._close(call, closed)
            content.append(read)
            deltas += delta
        if final and not self.calls:
            content.append(self._spaces)
            self._spaces = ""
        return "" if self.mode == "calls" else "".join(content), _merged(deltas)

    def _content(self, text: str) -> str:
        if self._after_call:
            text = text.lstrip()
            self._after_call = not text
        text = self._spaces + text
        kept = text.rstrip()
        self._spaces = text[len(kept) :]
        return kept

    def _close(self, call: _OpenCall, closed: bool) -> tuple[str, list[ToolCallDelta]]:
        """The call's end (its tag, or the answer's end): (content, deltas)."""
        self._open = None
        index = len(self.calls)
        if call.id is not None:  # streamed: the call stands, complete or cut short
            self.calls.append(ToolCall(call.id, call.name, call.arguments))
            self.cut_short |= call.args_end < 0
            self._after_call = True
            return "", []
        try:
            obj = json.loads(call.text)
        except ValueError:
            obj = None
        name = obj.get("name") if isinstance(obj, dict) else None
        arguments = obj.get("arguments") if isinstance(obj, dict) else None
        if name not in self.names or not isinstance(arguments, dict):
            # Not a call of ours: the block is content, as written.
            end = TOOL_CALL_CLOSE if closed else ""
            return self._content(f"{call.spaces_before}{TOOL_CALL_OPEN}{call.text}{end}"), []
        out = ToolCall(new_call_id(), name, json.dumps(arguments, ensure_ascii=False))
        self.calls.append(out)
        self._after_call = True
        return "", [ToolCallDelta(index, out.id, out.name, out.arguments)]


def _merged(deltas: list[ToolCallDelta]) -> list[ToolCallDelta]:
    """One delta per call: what a feed added to a call goes out as one."""
    out: list[ToolCallDelta] = []
    for d in deltas:
        if out and out[-1].index == d.index:
            last = out[-1]
            out[-1] = ToolCallDelta(d.index, last.id or d.id, last.name or d.name,
                                    last.arguments + d.arguments)  # fmt: skip
        else:
            out.append(d)
    return out


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that begins `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0
