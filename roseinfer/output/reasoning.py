"""A reasoning model's thinking read apart from its answer as the text streams (the server's
`--reasoning-parser`, vLLM's flag and parser names).

Both formats write the thinking between `<think>` and `</think>`. Where the prompt itself ends
in one (after blank space), the answer starts there, as llama.cpp reads it: after `<think>`
(the templates of QwQ, Qwen3's thinking-only models, DeepSeek-R1's), in the thinking; after
`</think>` (Qwen3's with `enable_thinking: false`: an empty block), in the answer. Else:

- `deepseek_r1`: everything before `</think>` is reasoning (DeepSeek-R1's template opens the
  block in the prompt, so the output may hold only its end; a leading `<think>` is dropped);
  an output with no `</think>` is all reasoning (cut while thinking), as vLLM reads it.
- `qwen3`: only a block the output opens at its start (after blank space) is reasoning; an
  output that opens none is all answer (Qwen3 with `enable_thinking: false`, or a model that
  does not think), one cut inside its block all reasoning.

Text that could still become a tag is held back until it cannot; the blank space around the
block is not part of the answer (the text after `</think>` starts at its first other
character). Streamed or not, the two parts are the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from roseinfer.reasoning_params import ThinkingBudget
from roseinfer.tokenizer import Tokenizer

ReasoningParserName = Literal["deepseek_r1", "qwen3"]
REASONING_PARSERS: tuple[ReasoningParserName, ...] = ("deepseek_r1", "qwen3")
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


# The prompt's last tokens read for a block it opens or closes: `</think>\n\n` spelled a
# byte-level piece at a time (no single-token tags) is 4.
PROMPT_END_TOKENS = 8


def prompt_end(tokenizer: Tokenizer, prompt_token_ids: Sequence[int]) -> str:
    """The text of the prompt's last tokens, special ones included (`prompt_block` reads it)."""
    return tokenizer.decode(list(prompt_token_ids[-PROMPT_END_TOKENS:]), skip_special_tokens=False)


def prompt_block(prompt_end: str) -> str | None:
    """Where the prompt's last characters (`prompt_end`) leave a thinking block: "open" (they
    open one), "closed" (they close one), or None."""
    tail = prompt_end.rstrip()
    if tail.endswith(THINK_OPEN):
        return "open"
    return "closed" if tail.endswith(THINK_CLOSE) else None


def thinking_first(name: ReasoningParserName, prompt_end: str) -> str | None:
    """How a grammar leaves room for the thinking the parser reads (`StructuredOutputs.
    thinking_first`): none where the prompt closed the block, required where it opened one or
    where `deepseek_r1` reads the output as thinking up to `</think>`, optional for `qwen3`."""
    block = prompt_block(prompt_end)
    if block == "closed":
        return None
    return "required" if block == "open" or name == "deepseek_r1" else "optional"


def thinking_budget(
    tokenizer: Tokenizer,
    max_tokens: int,
    prompt_token_ids: Sequence[int],
    tags: tuple[str, str] = (THINK_OPEN, THINK_CLOSE),
    message: str = "",
    armed: bool = False,
) -> ThinkingBudget:
    """A thinking budget for a prompt: its `tags` (both parsers' by default) and llama.cpp's
    `message` as the tokenizer writes them; the output starts inside a block where the prompt
    ends in the opening tag, or where `armed` (llama.cpp's `reasoning_budget_arm_immediately`)."""
    opened = armed or prompt_end(tokenizer, prompt_token_ids).rstrip().endswith(tags[0])
    open_ids, close_ids, message_ids = (tuple(tokenizer.encode(text, False))
                                        for text in (*tags, message))  # fmt: skip
    return ThinkingBudget(max_tokens, open_ids, close_ids, opened, message_ids)


def _held_tag_prefix(text: str, tag: str) -> int:
    """How many of `text`'s last characters begin `tag` (they may yet complete it)."""
    for n in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


class ReasoningParser:
    """`feed(text, final)` -> (reasoning, answer) of the text a choice just made final."""

    def __init__(self, name: ReasoningParserName, prompt_end: str = "") -> None:
        """`prompt_end`: the prompt's last characters (where a block it opens or closes
        shows)."""
        if name not in REASONING_PARSERS:
            raise ValueError(f"unknown reasoning parser {name!r} ({', '.join(REASONING_PARSERS)})")
        self.name = name
        # "start": nothing but blank space seen; "thinking": inside the block; "after": past
        # `</think>`, blank space not yet passed; "answer": the rest is answer
        self.phase = "start"
        self.held = ""  # text not yet given out: a possible tag, or blank space
        self.thought = False  # some text was read as reasoning: the reasoning is not None
        block = prompt_block(prompt_end)
        if block == "open":
            self.phase, self.thought = "thinking", True
        elif block == "closed":
            self.phase = "after"

    def feed(self, text: str, final: bool) -> tuple[str, str]:
        text = self.held + text
        self.held = ""
        reasoning = answer = ""
        while text:
            if self.phase == "start":
                stripped = text.lstrip()
                if stripped.startswith(THINK_OPEN):
                    self.phase, self.thought = "thinking", True
                    text = stripped[len(THINK_OPEN) :]
                elif THINK_OPEN.startswith(stripped) and not final:
                    self.held = text  # blank space, or the tag's first characters
                    return reasoning, answer
                elif self.name == "deepseek_r1":
                    self.phase, self.thought = "thinking", True  # opened by the prompt
                else:
                    self.phase = "answer"
            elif self.phase == "thinking":
                end = text.find(THINK_CLOSE)
                if end >= 0:
                    reasoning += text[:end]
                    text = text[end + len(THINK_CLOSE) :]
                    self.phase = "after"
                    continue
                keep = 0 if final else _held_tag_prefix(text, THINK_CLOSE)
                reasoning += text[: len(text) - keep]
                self.held = text[len(text) - keep :]
                return reasoning, answer
            elif self.phase == "after":
                stripped = text.lstrip()
                if not stripped:
                    return reasoning, answer  # blank space before the answer: dropped
                self.phase, text = "answer", stripped
            else:
                answer += text
                text = ""
        return reasoning, answer
