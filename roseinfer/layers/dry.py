"""llama.cpp's DRY penalty (`SamplingParams.dry`, roseinfer/dry_params.py) on one sequence's
window of tokens, as its `llama_sampler_dry_apply` computes it:

1. the repeat limit: back from the window's end, the first token that starts a sequence
   breaker (its tail, if any, following it) caps a run at the tokens after the breaker;
2. for each earlier position j holding the window's last token, the length of the run ending
   at j that the window's end repeats (llama.cpp's reversed Z-algorithm; here every candidate
   run is extended a token at a time, all candidates as one tensor op per token of length);
3. for each token that followed such a run of `allowed_length` tokens or more, the longest;
4. those tokens, but the single-token breakers, lowered by `multiplier * base ** (length -
   allowed_length)` (the exponent capped where the power would overflow fp32).

A step costs a few tensor ops per token of the longest repeat (each over the candidates still
matching), for the rows that ask for DRY alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

import torch

from roseinfer.dry_params import DryPenalty

__all__ = ["DryBreakers", "DryState", "dry_penalties"]


@dataclass(frozen=True)
class DryBreakers:
    """Sequence breakers as token ids (llama.cpp's `get_overlapping_token_sequences`): per head
    token, the token sequences (tails) that must follow it for the breaker to be whole; an
    empty tail: the head's text holds a breaker by itself. Read-only once made."""

    tails: Mapping[int, tuple[tuple[int, ...], ...]] = field(default_factory=dict)

    @property
    def single(self) -> frozenset[int]:
        """The tokens that are a breaker by themselves (never lowered)."""
        return frozenset(t for t, tails in self.tails.items() if () in tails)


@dataclass(eq=False)
class DryState:
    """One sequence's DRY: its penalty, its breakers (as tensors on the sampler's device) and
    its token ids as a tensor, grown by the new ones each step (all again where the sequence
    got shorter), so a step does not copy the whole list."""

    penalty: DryPenalty
    breakers: DryBreakers
    device: torch.device
    heads: torch.Tensor = field(init=False)  # [H] int64: the breakers' head tokens
    single: torch.Tensor = field(init=False)  # [S] int64: the single-token breakers
    ids: torch.Tensor = field(init=False)  # [capacity] int64: the sequence's tokens so far
    known: int = 0  # how many of `ids` are the sequence's

    def __post_init__(self) -> None:
        dev = self.device
        self.heads = torch.tensor(sorted(self.breakers.tails), dtype=torch.long, device=dev)
        self.single = torch.tensor(sorted(self.breakers.single), dtype=torch.long, device=dev)
        self.ids = torch.empty(0, dtype=torch.long, device=dev)

    def window(self, token_ids: list[int]) -> tuple[torch.Tensor, list[int]]:
        """The last `last_n` of `token_ids` (all with -1), as a tensor and as a list."""
        end = len(token_ids)
        if end < self.known:
            self.known = 0
        if end > self.ids.numel():
            grown = torch.empty(max(end, 2 * self.ids.numel(), 256), dtype=torch.long,
                                device=self.device)  # fmt: skip
            grown[: self.known] = self.ids[: self.known]
            self.ids = grown
        if end > self.known:
            new = token_ids[self.known : end]
            self.ids[self.known : end] = torch.tensor(new, dtype=torch.long, device=self.device)
            self.known = end
        last_n = self.penalty.last_n
        start = 0 if last_n < 0 else max(0, end - last_n)
        return self.ids[start:end], token_ids[start:end]

    def penalties(self, token_ids: list[int]) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(the tokens to lower [T] int64, by how much [T] fp32) after `token_ids`, or None."""
        window, ids = self.window(token_ids)
        return dry_penalties(window, ids, self.penalty, self.breakers, self.heads, self.single)


def repeat_limit(
    window: torch.Tensor, ids: Seq[int], breakers: DryBreakers, heads: torch.Tensor
) -> int:
    """How many of the window's last tokens a run may hold: those after the last whole
    breaker (llama.cpp's step 1: the first head from the end with a tail that follows it, the
    longest such tail), or the whole window."""
    n = len(ids)
    if heads.numel() == 0:
        return n
    at = torch.isin(window, heads).nonzero().view(-1).tolist()
    for p in reversed(at):
        after = n - 1 - p  # tokens after the head
        longest = -1
        for tail in breakers.tails[ids[p]]:
            size = len(tail)
            if longest < size <= after and tuple(ids[p + 1 : p + 1 + size]) == tail:
                longest = size
        if longest >= 0:
            return after - longest
    return n


def dry_penalties(
    window: torch.Tensor,  # [N] int64: the sequence's last tokens
    ids: Seq[int],  # the same, as a list
    penalty: DryPenalty,
    breakers: DryBreakers,
    heads: torch.Tensor,  # [H] int64: breakers' head tokens
    single: torch.Tensor,  # [S] int64: the single-token breakers
) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(the tokens DRY lowers [T] int64, by how much [T] fp32), or None where it lowers none."""
    n = window.numel()
    allowed = penalty.allowed_length
    if n <= allowed:
        return None
    limit = repeat_limit(window, ids, breakers, heads)
    if limit < allowed:
        return None
    # Runs that end at an earlier position j holding the last token: their lengths, grown a
    # token at a time while the tokens before j match those before the end (at most `limit`).
    ends = (window[: n - 1] == window[n - 1]).nonzero().view(-1)  # [C] positions j
    lengths = torch.ones_like(ends)
    going = torch.arange(ends.numel(), device=window.device)
    length = 1
    while going.numel() and length < limit:
        before = ends[going] - length
        same = (before >= 0) & (window[before.clamp(min=0)] == window[n - 1 - length])
        going = going[same]
        lengths[going] += 1
        length += 1
    long_enough = lengths >= allowed
    if not bool(long_enough.any()):
        return None
    followers = window[ends[long_enough] + 1]  # the token after each such run
    tokens, which = followers.unique(return_inverse=True)
    longest = torch.zeros_like(tokens).scatter_reduce_(0, which, lengths[long_enough], "amax")
    if single.numel():
        keep = ~torch.isin(tokens, single)
        tokens, longest = tokens[keep], longest[keep]
        if tokens.numel() == 0:
            return None
    exponent = longest - allowed
    if penalty.max_exponent > 0:
        exponent = exponent.clamp(max=penalty.max_exponent)
    amounts = penalty.multiplier * torch.pow(penalty.base, exponent.double())
    return tokens, amounts.float()
