"""Log-probabilities of chosen tokens and each position's likeliest ones, for a batch of rows.

One `log_softmax` and one `topk` over the rows that ask (never the whole batch), then one
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


def token_logprobs(logprobs: torch.Tensor, token_ids: torch.Tensor, k: int) -> LogprobsTensors:
    """logprobs [R, V] (a log_softmax), token_ids [R] int64 (each row's chosen token)."""
    chosen = logprobs.gather(1, token_ids.unsqueeze(1))  # [R, 1]
    if k == 0:
        ranks = (logprobs > chosen).sum(dim=1) + 1
        empty = token_ids.new_empty(len(token_ids), 0)
        return LogprobsTensors(chosen.squeeze(1), ranks, empty, logprobs.new_empty(len(token_ids), 0))
    top = logprobs.topk(k, dim=1)
    # A token at least as likely as the k-th has every likelier one among the top k: its rank
    # is counted there; only the other rows count over the vocabulary.
    ranks = (top.values > chosen).sum(dim=1) + 1
    outside = (chosen.squeeze(1) < top.values[:, -1]).nonzero().squeeze(1)
    if len(outside):
        ranks[outside] = (logprobs[outside] > chosen[outside]).sum(dim=1) + 1
    return LogprobsTensors(chosen.squeeze(1), ranks, top.indices, top.values)


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
