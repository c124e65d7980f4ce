"""The draw: each sampled row's token from its weights, by inverse CDF from one uniform u in
[0, 1) per row (the sampler's generator's, or the row's own seeded one). Over the whole
vocabulary (`sample_from`) or over a row's candidates alone (`sample_candidates`, where the
truncation kept none past them); both walk the tokens in id order, so a row's token for a u is
the same on either, up to the float rounding of the sums."""

from __future__ import annotations

import torch

__all__ = ["SAMPLE_BLOCK", "sample_candidates", "sample_from"]


def sample_from(probs: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF draw: each row's token i with P(i) = probs[i] / sum(probs), from one uniform
    u in [0, 1) per row. probs [B, V] >= 0 (unnormalised; a zero is never drawn), u [B] float64.

    Two levels keep it exact and cheap: the running total of blocks of `SAMPLE_BLOCK` tokens in
    float64 (a float32 cumsum over 49k tokens would misweigh the rare ones), then one block's
    own cumsum. One uniform per row instead of the one exponential per token an exponential
    race needs (BENCHMARKS.md, session 10: 1 ms instead of 34 ms at batch 32)."""
    rows, vocab = probs.shape
    pad = (-vocab) % SAMPLE_BLOCK
    blocks = torch.nn.functional.pad(probs, (0, pad)) if pad else probs
    blocks = blocks.view(rows, -1, SAMPLE_BLOCK)  # [B, NB, SAMPLE_BLOCK]
    # float32 block sums (128 terms each: accurate), their running total in float64
    block_cdf = blocks.sum(dim=-1).to(torch.float64).cumsum(dim=-1)  # [B, NB]
    total = block_cdf[:, -1:]
    target = u.unsqueeze(1) * total  # [B, 1]
    # the block where the cdf passes target (never past the last block with mass: rounding)
    b = torch.searchsorted(block_cdf, target, right=True)
    b = torch.minimum(b, (block_cdf < total).sum(dim=-1, keepdim=True))
    before = torch.where(b > 0, block_cdf.gather(1, (b - 1).clamp(min=0)), 0.0)
    inner = blocks[torch.arange(rows, device=probs.device), b.squeeze(1)]  # [B, SAMPLE_BLOCK]
    inner_cdf = inner.to(torch.float64).cumsum(dim=-1)
    j = torch.searchsorted(inner_cdf, target - before, right=True)
    j = torch.minimum(j, (inner_cdf < inner_cdf[:, -1:]).sum(dim=-1, keepdim=True))
    return (b * SAMPLE_BLOCK + j).squeeze(1)


SAMPLE_BLOCK = 128


def sample_candidates(weights: torch.Tensor, ids: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF draw among each row's candidates: token ids[r, i] with P = weights[r, i] /
    sum(weights[r]), walked in token order as `sample_from` walks the vocabulary. weights
    [C, m] >= 0 (a zero is never drawn), ids [C, m] int64, u [C] float64 -> [C] int64."""
    ids, by_id = ids.sort(dim=-1)
    cdf = weights.gather(1, by_id).to(torch.float64).cumsum(dim=-1)  # [C, m]
    total = cdf[:, -1:]
    j = torch.searchsorted(cdf, u.unsqueeze(1) * total, right=True)
    # (never past the last candidate with weight: rounding)
    j = torch.minimum(j, (cdf < total).sum(dim=-1, keepdim=True))
    return ids.gather(1, j).squeeze(1)
