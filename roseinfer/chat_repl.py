"""`roseinfer chat`'s loop: read a message, stream the model's reply, keep the conversation.

Lines are read with `input()`, so on a terminal Python's `readline` gives line editing and a
history (up/down arrows), kept across sessions in ~/.roseinfer_history where that can be written.
Slash commands are Ollama's (`/bye`, `/clear`, `/?`) and their longer names; multi-line messages
are Ollama's `\"\"\"` blocks or llama.cpp's trailing backslash. The model's text goes to stdout,
everything else (prompts aside) to stderr, so `roseinfer chat > reply.txt` keeps only replies.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from roseinfer.outputs import RequestFailed
from roseinfer.sampling_params import SamplingParams

PROMPT, CONTINUATION = "> ", "... "
BLOCK = '"""'
HISTORY_FILE = os.path.join("~", ".roseinfer_history")
HISTORY_LENGTH = 1000

HELP = f"""\
commands:
  /help, /?        this list
  /reset, /clear   forget the conversation (the --system prompt stays)
  /bye, /exit      quit (as Ctrl-D)
a message over several lines: open and close it with {BLOCK} (as Ollama; a message that starts
with / goes in such a block), or end a line with \\ to continue it on the next.
Ctrl-C stops a reply; arrows edit the line and walk the history ({HISTORY_FILE})."""

COMMANDS = ("/help", "/?", "/reset", "/clear", "/bye", "/exit")


class ChatModel(Protocol):
    """What the loop needs of `roseinfer.LLM`."""

    def encode_chat(self, messages: list[dict]) -> list[int]: ...
    def stream(self, prompt_token_ids: list[int], params: SamplingParams) -> Iterator[str]: ...


@dataclass(frozen=True)
class Entry:
    """One thing typed at the prompt: a message, or a command (a single line starting with /)."""

    text: str
    multiline: bool = False

    @property
    def command(self) -> str | None:
        words = self.text.split()
        return words[0] if not self.multiline and words and words[0].startswith("/") else None


class UnfinishedMessage(EOFError):
    """The input ended inside a multi-line message."""


def read_entry(read: Callable[[str], str]) -> Entry:
    """The next entry, read line by line with `read` (`input`); EOFError at the end of input."""
    line = read(PROMPT)
    if line.lstrip().startswith(BLOCK):
        return Entry(_read_block(line.lstrip()[len(BLOCK) :], read), multiline=True)
    parts = []
    while line.endswith("\\"):
        parts.append(line[:-1])
        try:
            line = read(CONTINUATION)
        except EOFError:
            raise UnfinishedMessage("a line ending with \\ was the last") from None
    if parts:
        return Entry("\n".join([*parts, line]).strip("\n"), multiline=True)
    return Entry(line.strip())


def _read_block(first: str, read: Callable[[str], str]) -> str:
    """A message from its opening line's text after the `\"\"\"` to the line ending with one."""
    lines, line = [], first
    while not line.rstrip().endswith(BLOCK):
        lines.append(line)
        try:
            line = read(CONTINUATION)
        except EOFError:
            raise UnfinishedMessage(f"no closing {BLOCK}") from None
    lines.append(line.rstrip()[: -len(BLOCK)])
    return "\n".join(lines).strip("\n")


def enable_line_editing(path: str = HISTORY_FILE) -> Callable[[], None] | None:
    """Line editing and history for `input()` with `readline`, where Python has it; the history
    is read from `path`. Returns what writes it back (call it at exit), or None."""
    try:
        import readline
    except ImportError:  # Python built without it (Windows)
        return None
    path = os.path.expanduser(path)
    readline.set_history_length(HISTORY_LENGTH)
    try:
        readline.read_history_file(path)
    except OSError:  # none yet, or unreadable: start empty
        pass

    def save() -> None:
        try:
            readline.write_history_file(path)
        except OSError:  # a read-only home: the history lasted this session
            pass

    return save


class ChatSession:
    """The conversation (`history`, as chat messages) and the loop that grows it."""

    def __init__(
        self,
        llm: ChatModel,
        params: SamplingParams,
        system: str | None = None,
        read: Callable[[str], str] = input,
    ) -> None:
        self.llm, self.params, self.read = llm, params, read
        # "" is a system message too (an empty one): the template's default is for None only
        self.start: list[dict] = [] if system is None else [{"role": "system", "content": system}]
        self.history = list(self.start)

    def run(self) -> int:
        """Read and answer until /bye, /exit or the end of input; the exit status."""
        note("roseinfer chat: type a message, /help for the commands, /bye or Ctrl-D to quit.")
        while True:
            try:
                entry = read_entry(self.read)
            except UnfinishedMessage as e:
                note(f"\nthe input ended inside a message ({e}): not sent")
                return 0
            except EOFError:
                note("")
                return 0
            except KeyboardInterrupt:
                note("\n(Ctrl-D or /bye to quit)")
                continue
            if entry.command is not None:
                if not self.run_command(entry.command):
                    return 0
            elif entry.text:
                self.reply(entry.text)

    def run_command(self, name: str) -> bool:
        """Do command `name`; False to quit."""
        if name in ("/bye", "/exit"):
            return False
        if name in ("/help", "/?"):
            note(HELP)
        elif name in ("/reset", "/clear"):
            self.history = list(self.start)
            note("(conversation cleared)")
        else:
            note(f"unknown command {name}: /help lists them")
        return True

    def reply(self, message: str) -> None:
        """Send `message` with the conversation so far and stream the answer to stdout; a
        message that cannot be answered (or a reply stopped with Ctrl-C) leaves no trace."""
        self.history.append({"role": "user", "content": message})
        reply, pieces = "", None
        try:
            pieces = self.llm.stream(self.llm.encode_chat(self.history), self.params)
            for piece in pieces:
                reply += piece
                print(piece, end="", flush=True)
        except (ValueError, RequestFailed) as e:  # e.g. the conversation outgrew the context
            note(f"\nerror: {e}")
            self.history.pop()
            return
        except KeyboardInterrupt:
            note("\n(stopped)")
            self.history.pop()
            return
        finally:
            close = getattr(pieces, "close", None)
            if close is not None:
                close()  # a generator stopped early aborts its request
        print()
        self.history.append({"role": "assistant", "content": reply})


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
