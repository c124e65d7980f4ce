"""llama.cpp's DRY penalty (`SamplingParams.dry`, roseinfer/dry_params.py) on one sequence's
window of tokens, as its `llama_sampler_dry_apply` computes it:

1. the repeat limit: back from the window's end, the first token that starts a sequence
   breaker (its tail, if any, following it) caps a run at the tokens after the breaker;
2. for each earlier position j, the length of the run ending at j that the window's end
   repeats (llama.cpp's reversed Z-algorithm), capped by the window's start and the limit;
3. for each token that followed such a run of `allowed_length` tokens or more, the longest;
4. those tokens, but the single-token breakers, lowered by `multiplier * base ** (length -
   allowed_length)` (the exponent capped where the power would overflow fp32, as llama.cpp
   computes it: `DryPenalty.max_exponent`, `amounts`).

Step 2 is kept between steps (`DryState`): when a token t joins the sequence, the run ending at
j grows by one where the token at j is t and ends elsewhere, one tensor op over the sequence,
so a step costs a few passes over the window whatever the repeats' lengths; the runs of a
sequence seen for the first time (or rewritten shorter) come from the Z-algorithm, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

import torch

from roseinfer.dry_params import DryPenalty

__all__ = ["DryBreakers", "DryState", "suffix_runs"]


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


def suffix_runs(ids: Seq[int]) -> list[int]:
    """runs[j] for j < len(ids) - 1: the length of the longest run of tokens ending at j that
    the sequence's end repeats (the Z-array of the reversed sequence: llama.cpp's step 2 over
    the whole sequence), in O(len(ids))."""
    r = list(reversed(ids))
    n = len(r)
    z = [0] * n
    lt = rt = 0
    for k in range(1, n):
        if k <= rt:
            z[k] = min(rt - k + 1, z[k - lt])
        while k + z[k] < n and r[z[k]] == r[k + z[k]]:
            z[k] += 1
        if k + z[k] - 1 > rt:
            lt, rt = k, k + z[k] - 1
    return [z[n - 1 - j] for j in range(n - 1)]


@dataclass(eq=False)
class DryState:
    """One sequence's DRY: its penalty, its breakers (as tensors on the sampler's device), its
    token ids and the runs of step 2 over the whole sequence, grown a token at a time (made
    again where the sequence got shorter)."""

    penalty: DryPenalty
    breakers: DryBreakers
    device: torch.device
    heads: torch.Tensor = field(init=False)  # [H] int64: the breakers' head tokens
    single: torch.Tensor = field(init=False)  # [S] int64: the single-token breakers
    ids: torch.Tensor = field(init=False)  # [capacity] int64: the sequence's tokens so far
    runs: torch.Tensor = field(init=False)  # [capacity] int64: step 2's runs, at j < known - 1
    known: int = 0  # how many of `ids` are the sequence's

    def __post_init__(self) -> None:
        dev = self.device
        self.heads = torch.tensor(sorted(self.breakers.tails), dtype=torch.long, device=dev)
        self.single = torch.tensor(sorted(self.breakers.single), dtype=torch.long, device=dev)
        self.ids = torch.empty(0, dtype=torch.long, device=dev)
        self.runs = torch.empty(0, dtype=torch.long, device=dev)

    def follow(self, token_ids: list[int]) -> None:
        """Bring `ids` and `runs` up to `token_ids`."""
        end, dev = len(token_ids), self.device
        if end > self.ids.numel():
            size = max(end, 2 * self.ids.numel(), 256)
            ids = torch.empty(size, dtype=torch.long, device=dev)
            runs = torch.zeros(size, dtype=torch.long, device=dev)
            ids[: self.known] = self.ids[: self.known]
            runs[: self.known] = self.runs[: self.known]
            self.ids, self.runs = ids, runs
        if end < self.known or (self.known == 0 and end > 0):  # new, or rewritten: all again
            self.ids[:end] = torch.tensor(token_ids, dtype=torch.long, device=dev)
            if end > 1:
                self.runs[: end - 1] = torch.tensor(suffix_runs(token_ids), device=dev)
            self.known = end
        for t in range(self.known, end):  # a token joins: runs ending on it grow, others end
            if t > 0:
                grown = torch.empty(t, dtype=torch.long, device=dev)
                grown[0] = 1
                grown[1:] = self.runs[: t - 1] + 1
                self.runs[:t] = grown.masked_fill_(self.ids[:t] != token_ids[t], 0)
            self.ids[t] = token_ids[t]
        self.known = end

    def penalties(self, token_ids: list[int]) -> tuple[torch.Tensor, torch.Tensor] | None:
        """(the tokens to lower [T] int64, by how much [T] fp32) after `token_ids`, or None."""
        self.follow(token_ids)
        end, p = self.known, self.penalty
        start = 0 if p.last_n < 0 else max(0, end - p.last_n)
        n = end - start
        if n <= p.allowed_length:
            return None
        limit = repeat_limit(self.ids[start:end], token_ids, start, self.breakers, self.heads)
        if limit < p.allowed_length:
            return None
        # runs ending at j = start .. end - 2, within the window (j - start + 1) and the limit
        reach = torch.arange(1, n, device=self.device).clamp_(max=limit)
        lengths = torch.minimum(self.runs[start : end - 1], reach)
        long_enough = lengths >= p.allowed_length
        followers = self.ids[start + 1 : end][long_enough]  # the token after each such run
        if followers.numel() == 0:
            return None
        tokens, which = followers.unique(return_inverse=True)
        longest = torch.zeros_like(tokens).scatter_reduce_(0, which, lengths[long_enough], "amax")
        if self.single.numel():
            keep = ~torch.isin(tokens, self.single)
            tokens, longest = tokens[keep], longest[keep]
            if tokens.numel() == 0:
                return None
        return tokens, amounts(p, longest)


def repeat_limit(
    window: torch.Tensor,  # [N] int64: the window's tokens
    ids: Seq[int],  # the sequence's tokens (the window is ids[start:])
    start: int,
    breakers: DryBreakers,
    heads: torch.Tensor,
) -> int:
    """How many of the window's last tokens a run may hold: those after the last whole
    breaker (llama.cpp's step 1: the first head from the end with a tail that follows it, the
    longest such tail), or the whole window."""
    n = window.numel()
    if heads.numel() == 0:
        return n
    at = torch.isin(window, heads).nonzero().view(-1).tolist()
    for p in reversed(at):
        after = n - 1 - p  # tokens after the head
        longest = -1
        head = start + p
        for tail in breakers.tails[ids[head]]:
            size = len(tail)
            if longest < size <= after and tuple(ids[head + 1 : head + 1 + size]) == tail:
                longest = size
        if longest >= 0:
            return after - longest
    return n


def amounts(penalty: DryPenalty, lengths: torch.Tensor) -> torch.Tensor:
    """multiplier * base ** (length - allowed_length), in fp32, as llama.cpp computes it: its
    float multiplier and base, the power in double, the exponent capped at `max_exponent`."""
    exponent = lengths - penalty.allowed_length
    if penalty.max_exponent > 0:
        exponent = exponent.clamp(max=penalty.max_exponent)
    power = torch.pow(penalty.base_fp32, exponent.double())
    return (penalty.multiplier_fp32 * power).float()
