"""llama.cpp's XTC ("exclude top choices"): with a row's probability, where two or more of its
tokens are at least `threshold` likely, all of them go but the least likely, so the text takes a
less obvious turn while staying among the likely tokens. It reads the distribution the
truncation left (after min-p), before a late temperature, as llama.cpp's chain does.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq

import torch

# Above this no two tokens can both reach the threshold (llama.cpp switches XTC off there).
MAX_XTC_THRESHOLD = 0.5


def xtc_filter(
    weights: torch.Tensor,  # [R, V] unnormalised, >= 0 (a zero: cut)
    probability: Seq[float],  # each row's chance of XTC acting this step (0: never)
    threshold: Seq[float],
    draws: Seq[float],  # each row's uniform draw in [0, 1): XTC acts where it is <= probability
) -> torch.Tensor:
    """Zero, in place, each acting row's tokens of probability >= its threshold but the least
    likely of them (one of equal ones: the last by id), where there are two or more."""
    for i, (p, t, u) in enumerate(zip(probability, threshold, draws, strict=True)):
        if p <= 0.0 or t > MAX_XTC_THRESHOLD or u > p:
            continue
        row = weights[i]
        above = row >= t * row.sum()
        if int(above.sum()) < 2:
            continue
        kept = row.masked_fill(~above, float("inf"))
        least = int(kept.numel() - 1 - kept.flip(0).argmin())  # (ties: the last id)
        above[least] = False
        row.masked_fill_(above, 0.0)
    return weights
