"""What the sampler keeps of each sequence (`RowState`) and the masks it writes from it:
-inf, in place, for the tokens a row may not take now (`allowed_token_ids`, `bad_words`,
`min_tokens`' stop tokens, the grammar's bitmask; all but one where a thinking budget forces
the tag that closes its block)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

import torch

from roseinfer.layers.bad_words import bad_word_ends, completing_tokens
from roseinfer.layers.dry import DryBreakers, DryState
from roseinfer.layers.penalties import History
from roseinfer.layers.thinking import ThinkingCounter
from roseinfer.sampling_params import SamplingParams
from roseinfer.structured.grammar import fill_bitmask

__all__ = ["RowState", "mask", "masks_write", "rows_and_ids"]


@dataclass(frozen=True, slots=True)
class RowState:
    """What the sampler keeps of one sequence, made once (`RowState.of`): its seeded
    generator, and its id lists as tensors and lookups, so a step's cost does not grow with them
    (walked in Python at every step, 400,000 allowed ids had held every other request 22 s)."""

    generator: torch.Generator | None = None
    allowed_ids: torch.Tensor | None = None  # [A] int64: allowed_token_ids
    bias_ids: torch.Tensor | None = None  # [K] int64: logit_bias' tokens
    bias_values: torch.Tensor | None = None  # [K] fp32: their biases
    stop_ids: torch.Tensor | None = None  # [S] int64: stop_token_ids (masked before min_tokens)
    # bad words by the length of their head (all but the last token): head -> last tokens [E]
    bad_word_ends: dict[int, dict[tuple[int, ...], torch.Tensor]] = field(default_factory=dict)
    thinking: ThinkingCounter | None = None  # with a thinking budget: where its block stands
    dry: DryState | None = None  # with DRY: its breakers and the sequence's ids as a tensor

    @staticmethod
    def of(
        params: SamplingParams,
        bad_words: Seq[tuple[int, ...]],
        dev: torch.device,
        dry_breakers: DryBreakers | None = None,
    ) -> RowState:
        """A sequence's state (`bad_words`: its bad words' token ids; `dry_breakers`: its DRY
        sequence breakers' token ids, none where not given)."""
        generator = None
        if params.seed is not None and not params.greedy:
            generator = torch.Generator(dev).manual_seed(params.seed)

        def ids(values: Iterable[int]) -> torch.Tensor:
            return torch.tensor(list(values), dtype=torch.long, device=dev)

        bias = params.logit_bias or {}
        return RowState(
            generator,
            None if params.allowed_token_ids is None else ids(params.allowed_token_ids),
            ids(bias) if bias else None,
            torch.tensor(list(bias.values()), dtype=torch.float32, device=dev) if bias else None,
            ids(params.stop_token_ids) if params.stop_token_ids else None,
            bad_word_ends(tuple(bad_words), dev) if bad_words else {},
            None if params.thinking_budget is None else ThinkingCounter.of(params.thinking_budget),
            DryState(params.dry, dry_breakers or DryBreakers(), dev)
            if params.dry is not None and params.uses_dry
            else None,
        )


def masks_write(p: SamplingParams, num_outputs: int) -> bool:
    """Whether `mask` writes into this row."""
    return bool(
        p.allowed_token_ids
        or p.bad_words
        or p.structured_outputs is not None
        or num_outputs < p.min_tokens
        or p.thinking_budget is not None
    )


def mask(
    logits: torch.Tensor,
    params: Seq[SamplingParams],
    states: Seq[RowState],
    num_outputs: Seq[int],
    histories: Seq[History] | None,
    stop_token_ids: torch.Tensor,  # the model's [S] int64
    apply_bitmask: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None],
) -> list[int]:
    """-inf, in place, for the tokens a row may not take now; returns the rows left with
    no token at all (set to 0 instead, so the batch's arithmetic stays finite)."""
    dev = logits.device
    allowed_ids = {i: s.allowed_ids for i, s in enumerate(states) if s.allowed_ids is not None}
    allowed = list(allowed_ids)
    if allowed:
        rows, ids = rows_and_ids(list(allowed_ids.values()), dev)
        keep = torch.zeros(len(allowed), logits.shape[-1], dtype=torch.bool, device=dev)
        keep[rows, ids] = True
        index = torch.tensor(allowed, device=dev)
        logits[index] = logits[index].masked_fill(~keep, float("-inf"))
    if any(p.bad_words for p in params):
        if histories is None:
            raise ValueError("bad_words need each row's sequence (histories)")
        banned_rows, banned = [], []
        for i, p in enumerate(params):
            if p.bad_words:
                ends = completing_tokens(histories[i], states[i].bad_word_ends)
                banned_rows += [i] * len(ends)
                banned += ends
        if banned:
            logits[rows_and_ids(banned, dev, banned_rows)] = float("-inf")
    for i, p in enumerate(params):
        if num_outputs[i] < p.min_tokens:  # no stop token (the model's or the request's) yet
            logits[i, stop_token_ids] = float("-inf")
            if (stop_ids := states[i].stop_ids) is not None:
                logits[i, stop_ids] = float("-inf")
    constrained = [i for i, p in enumerate(params) if p.structured_outputs is not None]
    if constrained:
        if histories is None:
            raise ValueError("structured outputs need each row's sequence (histories)")
        bitmask = fill_bitmask([histories[i].matcher for i in constrained], logits.shape[1])
        apply_bitmask(logits, bitmask, torch.tensor(constrained, dtype=torch.long))
        allowed += constrained
    budgeted = [i for i, s in enumerate(states) if s.thinking is not None]
    if budgeted:  # (last: a forced tag passes over what the masks above allow)
        if histories is None:
            raise ValueError("a thinking budget needs each row's sequence (histories)")
        for i in budgeted:
            h = histories[i]
            counter = states[i].thinking
            assert counter is not None
            if (token := counter.forced(h.token_ids, h.num_prompt_tokens)) is not None:
                logits[i] = float("-inf")  # (the tag alone, whatever the masks above left)
                logits[i, token] = 0.0
    if not allowed:
        return []
    empty = logits[allowed].isneginf().all(dim=-1)
    if not bool(empty.any()):
        return []
    no_token = [allowed[j] for j in empty.nonzero().squeeze(1).tolist()]
    logits[no_token] = 0.0
    return no_token


def rows_and_ids(
    lists: Seq[torch.Tensor], device: torch.device, rows: Seq[int] | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Index pairs for a scatter into [B, V]: each list's row (`rows[j]`, or j) repeated for
    its ids, and the ids, concatenated."""
    counts = torch.tensor([len(t) for t in lists], device=device)
    which = torch.tensor(list(rows) if rows is not None else range(len(lists)), device=device)
    return which.repeat_interleave(counts), torch.cat(list(lists))
