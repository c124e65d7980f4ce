"""Log-probabilities of chosen tokens and each position's likeliest ones, for a batch of rows.

Over the rows that ask (never the whole batch): a `topk` by blocks, the rows' logsumexp and the
chosen tokens' ranks (two passes, `LogprobOps`: the backend's kernels or the torch versions
here), then one host copy; `to_records` turns the tensors into the engine's `TokenLogprobs`.
Rows may be in the model's dtype: every value is taken to fp32 before any arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from roseinfer.layers.truncation import FLOOR_WEIGHT, logsumexp_rows
from roseinfer.outputs import TokenLogprobs


def count_greater_rows(rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """How many of row r's logits exceed values[r]: rows [R, V], values [R] fp32 -> [R] int64."""
    return (rows.float() > values.unsqueeze(1)).sum(dim=1)


@dataclass(frozen=True, slots=True)
class LogprobOps:
    """The two passes logprobs take over every logit of their rows (`Backend.logsumexp`,
    `Backend.count_greater`; torch's, above, by default)."""

    logsumexp: Callable[[torch.Tensor], torch.Tensor] = logsumexp_rows
    count_greater: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = count_greater_rows


@dataclass(frozen=True, slots=True)
class LogprobsTensors:
    """Per row: the chosen token's logprob [R] and rank [R] (1: the likeliest), and the top K
    (ids [R, K], logprobs [R, K], likeliest first; K the most any row asked for). Rows that
    list given tokens instead (`SamplingParams.logprob_token_ids`, `with_listed`) hold those
    in their first columns, in the order given, and `top_ranks` [R, K] holds every column's
    rank (None: the top K's, 1 to K)."""

    token_logprobs: torch.Tensor
    ranks: torch.Tensor
    top_ids: torch.Tensor
    top_logprobs: torch.Tensor
    top_ranks: torch.Tensor | None = None

    @property
    def width(self) -> int:
        return self.top_ids.shape[1]

    def widened(self, width: int) -> LogprobsTensors:
        """The same rows with `width` >= K columns (the new ones empty: logprob -inf) and
        `top_ranks` written out."""
        extra = width - self.width
        ranks = self.top_ranks
        if ranks is None:
            ranks = torch.arange(1, self.width + 1, device=self.top_ids.device)
            ranks = ranks.expand(len(self.ranks), -1)
        return LogprobsTensors(
            self.token_logprobs,
            self.ranks,
            F.pad(self.top_ids, (0, extra)),
            F.pad(self.top_logprobs, (0, extra), value=float("-inf")),
            F.pad(ranks, (0, extra)),
        )


@dataclass(frozen=True, slots=True)
class RawLogits:
    """What logprobs need of rows of raw logits, taken before the sampler masks or changes
    them: the rows themselves ([R, V], fp32 or the model's dtype, unchanged by whatever the
    sampler does next), their logsumexp [R] and their top K (fp32 [R, K] and ids, likeliest
    first)."""

    rows: torch.Tensor
    lse: torch.Tensor
    top_values: torch.Tensor
    top_ids: torch.Tensor
    ops: LogprobOps

    @classmethod
    def of(cls, rows: torch.Tensor, k: int, ops: LogprobOps) -> RawLogits:
        """`rows` [R, V]; the caller keeps them unchanged until `logprobs`."""
        top_values, top_ids = top_k(rows, k)
        return cls(rows, ops.logsumexp(rows), top_values.float(), top_ids, ops)

    def logprobs(
        self, token_ids: torch.Tensor, listed: Seq[tuple[int, ...] | None] = ()
    ) -> LogprobsTensors:
        """Each row's chosen token [R] int64: its logprob and rank (1: the likeliest), and the
        top K's logprobs (log_softmax = logit - logsumexp, never materialised over the
        vocabulary); rows with `listed` tokens (one entry a row, or none) those instead."""
        chosen = self.rows.gather(1, token_ids.unsqueeze(1)).squeeze(1).float()  # [R]
        ranks = self.ops.count_greater(self.rows, chosen) + 1
        out = LogprobsTensors(
            chosen - self.lse, ranks, self.top_ids, self.top_values - self.lse.unsqueeze(1)
        )
        return with_listed(out, listed, self.rows, self.lse, self.ops)


def with_listed(
    tensors: LogprobsTensors,
    listed: Seq[tuple[int, ...] | None],
    rows: torch.Tensor,  # [R, V] the rows' raw logits
    lse: torch.Tensor,  # [R] their logsumexp
    ops: LogprobOps,
) -> LogprobsTensors:
    """vLLM's `logprob_token_ids`: each row with listed tokens holds them in its first
    columns, in order, in place of its top K: their logprobs and ranks (a pass over the row
    for each: a long list costs as many passes as it has tokens)."""
    given = [(r, ids) for r, ids in enumerate(listed) if ids]
    if not given:
        return tensors
    out = tensors.widened(max(tensors.width, *(len(ids) for _, ids in given)))
    assert out.top_ranks is not None
    for r, ids in given:
        row = rows[r : r + 1]  # [1, V]
        logits = row[0, list(ids)].float()  # [M]
        ranks = [ops.count_greater(row, logits[j : j + 1]) for j in range(len(ids))]
        out.top_ids[r, : len(ids)] = torch.tensor(ids, device=out.top_ids.device)
        out.top_logprobs[r, : len(ids)] = logits - lse[r]
        out.top_ranks[r, : len(ids)] = torch.cat(ranks) + 1
    return out


def top_k(rows: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's k largest values and their ids, largest first ([R, k] each).

    The k largest lie in the k blocks of `BLOCK` tokens with the largest maxima (a block
    with a smaller maximum would leave k larger values before it), so: one pass for the
    block maxima, then `topk` over k blocks. `torch.topk` over 49k tokens costs several."""
    num_rows, vocab = rows.shape
    if k == 0:
        return rows.new_empty(num_rows, 0), rows.new_empty(num_rows, 0, dtype=torch.long)
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


def token_logprobs(
    logits: torch.Tensor, token_ids: torch.Tensor, k: int, ops: LogprobOps
) -> LogprobsTensors:
    """Logprobs of given tokens from rows of logits [R, V] (the prompt's: no sampler in
    between); token_ids [R] int64."""
    return RawLogits.of(logits, k, ops).logprobs(token_ids)


def drawn_logprobs(
    weights: torch.Tensor | None, token_ids: torch.Tensor, vocab: int, k: int
) -> LogprobsTensors:
    """Logprobs of the distribution rows were drawn from (after every sampler: llama.cpp's
    `post_sampling_probs`): weights [R, V] >= 0, unnormalised (a zero: not drawable; a row of
    zeros, or None for every row, a greedy one: its token alone, at probability 1); token_ids
    [R] the tokens drawn. A zero's logprob is -inf (`to_records` leaves those out)."""
    if weights is None:
        weights = torch.zeros(len(token_ids), vocab, device=token_ids.device)
    weights = weights.float()
    greedy = (weights.sum(dim=1) == 0).nonzero().squeeze(1)
    weights[greedy, token_ids[greedy]] = 1.0
    # a weight at exp's floor stands for one that underflowed (`unnormalised_probs`): 0
    weights = weights.masked_fill_(weights <= FLOOR_WEIGHT, 0.0)
    total = weights.sum(dim=1)  # [R]
    chosen = weights.gather(1, token_ids.unsqueeze(1)).squeeze(1)  # [R]
    ranks = (weights > chosen.unsqueeze(1)).sum(dim=1) + 1
    top_weights, top_ids = top_k(weights, k)  # (the log of those alone: CPU's is slow on 0)
    return LogprobsTensors((chosen / total).log(), ranks, top_ids,
                           (top_weights / total.unsqueeze(1)).log())  # fmt: skip


def merged(parts: Seq[tuple[Seq[int], LogprobsTensors]]) -> LogprobsTensors:
    """Parts' rows as one set, in the order of their positions (`parts`: each one's row
    positions, ascending, and its tensors; the same K in all)."""
    if len(parts) == 1:
        return parts[0][1]
    positions = [i for rows, _ in parts for i in rows]
    order = sorted(range(len(positions)), key=positions.__getitem__)
    index = torch.tensor(order, device=parts[0][1].ranks.device)
    width = max(tensors.width for _, tensors in parts)
    if any(t.width != width or t.top_ranks is not None for _, t in parts):  # (listed tokens)
        parts = [(rows, t.widened(width)) for rows, t in parts]

    def rows(name: str) -> torch.Tensor:
        return torch.cat([getattr(tensors, name) for _, tensors in parts])[index]

    top_ranks = None if parts[0][1].top_ranks is None else rows("top_ranks")
    return LogprobsTensors(rows("token_logprobs"), rows("ranks"), rows("top_ids"),
                           rows("top_logprobs"), top_ranks)  # fmt: skip


def to_records(
    tensors: LogprobsTensors, token_ids: Seq[int], num_top: Seq[int]
) -> list[TokenLogprobs]:
    """Row i's `TokenLogprobs`, with its own `num_top[i]` of the top K (one host copy each;
    a top token of probability 0, in a drawn distribution, left out)."""
    values = tensors.token_logprobs.tolist()
    ranks = tensors.ranks.tolist()
    top_ids = tensors.top_ids.tolist()
    top_values = tensors.top_logprobs.tolist()
    top_ranks = None if tensors.top_ranks is None else tensors.top_ranks.tolist()
    records = []
    for i in range(len(token_ids)):
        n = num_top[i]
        kept = [j for j in range(min(n, len(top_ids[i]))) if top_values[i][j] != float("-inf")]
        records.append(TokenLogprobs(
            token_ids[i],
            values[i],
            ranks[i],
            tuple((top_ids[i][j], top_values[i][j]) for j in kept),
            () if top_ranks is None else tuple(top_ranks[i][j] for j in kept),
        ))  # fmt: skip
    return records
