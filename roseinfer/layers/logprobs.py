"""Log-probabilities of chosen tokens and each position's likeliest ones, for a batch of rows.

One `logsumexp` and one `topk` over the rows that ask (never the whole batch), then one
host copy; `to_records` turns the tensors into the engine's plain `TokenLogprobs`.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass

import torch

from roseinfer.outputs import TokenLogprobs


@dataclass(frozen=True, slots=True)
class LogprobsTensors:
    """Per row: the chosen token's logprob [R] and rank [R] (1: the likeliest), and the top K
    (ids [R, K], logprobs [R, K], likeliest first; K the most any row asked for)."""

    token_logprobs: torch.Tensor
    ranks: torch.Tensor
    top_ids: torch.Tensor
    top_logprobs: torch.Tensor


@dataclass(frozen=True, slots=True)
class RawLogits:
    """What logprobs need of rows of raw logits, taken before the sampler masks or changes
    them: the rows themselves ([R, V] float, unchanged by whatever the sampler does next),
    their logsumexp [R] and their top K (logits [R, K] and ids, likeliest first)."""

    rows: torch.Tensor
    lse: torch.Tensor
    top_values: torch.Tensor
    top_ids: torch.Tensor

    @classmethod
    def of(cls, rows: torch.Tensor, k: int) -> RawLogits:
        """`rows` [R, V] float; the caller keeps them unchanged until `logprobs`."""
        top_values, top_ids = top_k(rows, k)
        # logsumexp, its max taken from the block maxima `top_k` has (or a pass of its own)
        peak = top_values[:, :1] if k > 0 else rows.amax(dim=1, keepdim=True)
        lse = (rows - peak).exp_().sum(dim=1).log_() + peak.squeeze(1)
        return cls(rows, lse, top_values, top_ids)

    def logprobs(self, token_ids: torch.Tensor) -> LogprobsTensors:
        """Each row's chosen token [R] int64: its logprob and rank, and the top K's logprobs
        (log_softmax = logit - logsumexp, never materialised over the vocabulary)."""
        chosen = self.rows.gather(1, token_ids.unsqueeze(1))  # [R, 1]
        if self.top_values.shape[1]:
            # A token at least as likely as the k-th has every likelier one among the top k:
            # its rank is counted there; only the other rows count over the vocabulary.
            ranks = (self.top_values > chosen).sum(dim=1) + 1
            is_outside = chosen.squeeze(1) < self.top_values[:, -1]
            outside = is_outside.nonzero().squeeze(1)
            if 2 * len(outside) > len(ranks):  # most rows: one pass over them all, no gather
                ranks = torch.where(is_outside, (self.rows > chosen).sum(dim=1) + 1, ranks)
            elif len(outside):
                ranks[outside] = (self.rows[outside] > chosen[outside]).sum(dim=1) + 1
        else:
            ranks = (self.rows > chosen).sum(dim=1) + 1
        lse = self.lse.unsqueeze(1)
        return LogprobsTensors(
            (chosen - lse).squeeze(1), ranks, self.top_ids, self.top_values - lse
        )


def top_k(rows: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's k largest values and their ids, largest first ([R, k] each).

    The k largest lie in the k blocks of `BLOCK` tokens with the largest maxima (a block
    with a smaller maximum would leave k larger values before it), so: one pass for the
    block maxima, then `topk` over k blocks. `torch.topk` over 49k tokens costs several."""
    num_rows, vocab = rows.shape
    if k == 0:
        return rows.new_empty(num_rows, 0), torch.empty(num_rows, 0, dtype=torch.long)
    if vocab % BLOCK or vocab // BLOCK <= k:
        top = rows.topk(k, dim=1)
        return top.values, top.indices
    blocks = rows.view(num_rows, -1, BLOCK)
    best = blocks.amax(dim=2).topk(k, dim=1).indices  # [R, k] blocks
    candidates = blocks.gather(1, best.unsqueeze(2).expand(-1, -1, BLOCK)).view(num_rows, -1)
    top = candidates.topk(k, dim=1)  # over k * BLOCK
    ids = best.gather(1, top.indices // BLOCK) * BLOCK + top.indices % BLOCK
    return top.values, ids


BLOCK = 128


def token_logprobs(logprobs: torch.Tensor, token_ids: torch.Tensor, k: int) -> LogprobsTensors:
    """Logprobs of given tokens from rows of logits [R, V] float (the prompt's: no sampler in
    between); token_ids [R] int64."""
    return RawLogits.of(logprobs, k).logprobs(token_ids)


def to_records(
    tensors: LogprobsTensors, token_ids: Seq[int], num_top: Seq[int]
) -> list[TokenLogprobs]:
    """Row i's `TokenLogprobs`, with its own `num_top[i]` of the top K (one host copy each)."""
    values = tensors.token_logprobs.tolist()
    ranks = tensors.ranks.tolist()
    top_ids = tensors.top_ids.tolist()
    top_values = tensors.top_logprobs.tolist()
    return [
        TokenLogprobs(
            token_ids[i],
            values[i],
            ranks[i],
            tuple(zip(top_ids[i][: num_top[i]], top_values[i][: num_top[i]], strict=True)),
        )
        for i in range(len(token_ids))
    ]
