"""vLLM's `thinking_token_budget` and llama.cpp's `reasoning_budget_tokens`: once a thinking
block has run for its budget of tokens, the tokens of llama.cpp's budget message and then of
the tag that closes it are the only ones a row may take, one a step, until it is closed.

`ThinkingCounter` follows one sequence's output a token at a time (a step reads only the tokens
that came since the last), matching the block's opening and closing token sequences
(`ThinkingBudget.open_ids`, `close_ids`) as the model writes them; a block closed in the middle
of being forced (or by the model itself) ends the count, and a block opened later counts anew.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass

from roseinfer.reasoning_params import ThinkingBudget


@dataclass(eq=False, slots=True)
class ThinkingCounter:
    """One sequence's place in its thinking: inside a block or not, the tokens written in it,
    and how much of the opening or closing tag its last tokens hold."""

    budget: ThinkingBudget
    seen: int = 0  # output tokens read so far
    inside: bool = False
    count: int = 0  # tokens written inside the open block
    matched: int = 0  # of the tag the state waits for (closing inside, opening outside)
    messaged: int = 0  # of the budget message's tokens, those forced so far in this block

    @classmethod
    def of(cls, budget: ThinkingBudget) -> ThinkingCounter:
        return cls(budget, inside=budget.opened_by_prompt)

    def forced(self, token_ids: Seq[int], num_prompt_tokens: int) -> int | None:
        """The token this step must take (the closing tag's next), or None; `token_ids`: the
        sequence's prompt and output so far (only the output's past `seen` are read)."""
        for token in token_ids[num_prompt_tokens + self.seen :]:
            self._read(token)
        self.seen = len(token_ids) - num_prompt_tokens
        if not self.inside or self.count < self.budget.max_tokens:
            return None
        message = self.budget.message_ids
        if self.messaged < len(message):
            return message[self.messaged]
        return self.budget.close_ids[self.matched]

    def _read(self, token: int) -> None:
        tag = self.budget.close_ids if self.inside else self.budget.open_ids
        if self.inside:
            if self.count >= self.budget.max_tokens and self.messaged < len(
                self.budget.message_ids
            ):
                self.messaged += 1  # (a forced token: the only one it could take)
            self.count += 1
        if token == tag[self.matched]:
            self.matched += 1
        else:  # (a tag's first token may start a new match)
            self.matched = 1 if token == tag[0] else 0
        if self.matched == len(tag):  # the tag is whole: the block opens or closes
            self.inside, self.count, self.matched, self.messaged = not self.inside, 0, 0, 0
