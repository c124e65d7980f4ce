"""A request's thinking budget (`SamplingParams.thinking_budget`): vLLM's
`thinking_token_budget` and llama.cpp's `reasoning_budget_tokens` as token ids, checked once
(the sampler's `layers/thinking.py` follows it)."""

from __future__ import annotations

from dataclasses import dataclass

from roseinfer.checks import check_bools, is_int


@dataclass(frozen=True)
class ThinkingBudget:
    """vLLM's `thinking_token_budget`, llama.cpp's `reasoning_budget_tokens`: past `max_tokens`
    tokens inside a thinking block (opened by `open_ids`, or by the prompt), `message_ids` and
    the block's `close_ids` are forced, a token at a time (layers/thinking.py)."""

    max_tokens: int
    open_ids: tuple[int, ...]  # the tokens of the tag that opens a block (`<think>`)
    close_ids: tuple[int, ...]  # and of the one that closes it (`</think>`), forced in turn
    opened_by_prompt: bool = False  # the prompt ends inside a block: the output starts in it
    message_ids: tuple[int, ...] = ()  # llama.cpp's budget message, forced before `close_ids`

    def __post_init__(self) -> None:
        if not is_int(self.max_tokens) or self.max_tokens < 0:
            raise ValueError(f"thinking_budget's max_tokens must be an integer >= 0, got "
                             f"{self.max_tokens!r}")  # fmt: skip
        for name in ("open_ids", "close_ids", "message_ids"):
            ids = tuple(getattr(self, name))
            if not (ids or name == "message_ids") or not all(is_int(t) and t >= 0 for t in ids):
                raise ValueError(f"thinking_budget's {name} must be token ids, got {ids!r}")
            object.__setattr__(self, name, ids)
        check_bools(opened_by_prompt=self.opened_by_prompt)
