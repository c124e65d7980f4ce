"""The sampler's truncation and temperature passes over a batch's logits [B, V]: which tokens
each row keeps (top-k, top-p, min-p) and how they weigh (the temperature, before the
truncation as vLLM and transformers apply it, or after it as llama.cpp does: `temper_late`).
`Sampler` (sampler.py) runs them in its order; each works on every row at once."""

from __future__ import annotations

from collections.abc import Sequence as Seq

import torch

from roseinfer.sampling_params import GREEDY_TEMPERATURE

__all__ = ["apply_top_k_top_p", "min_p_filter", "temper_late", "unnormalised_probs"]


def apply_top_k_top_p(
    logits: torch.Tensor, top_k: torch.Tensor | None, top_p: torch.Tensor | None
) -> torch.Tensor:
    """Mask logits outside each row's top-k / top-p set with -inf. logits [B, V]; top_k, top_p [B]."""
    sorted_logits, order = logits.sort(dim=-1)  # ascending
    vocab = logits.shape[-1]
    if top_k is not None:
        k = torch.where(top_k > 0, top_k, vocab).clamp(max=vocab)
        kth = sorted_logits.gather(1, (vocab - k).unsqueeze(1))  # [B, 1]
        sorted_logits = sorted_logits.masked_fill(sorted_logits < kth, float("-inf"))
    if top_p is not None:
        cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        drop = cum <= (1 - top_p).unsqueeze(1)
        drop[:, -1] = False  # always keep the most likely token
        sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.empty_like(logits).scatter_(1, order, sorted_logits)


def unnormalised_probs(
    logits: torch.Tensor, in_place: bool = False, peak: torch.Tensor | None = None
) -> torch.Tensor:
    """exp(logits - row max) [B, V]: each row's probabilities times a constant, its top one
    exactly 1 (what `min_p_filter` and `sample_from` take; a softmax would also divide).
    `in_place`: into `logits` (a tensor the sampler made), sparing a [B, V] allocation;
    `peak`: the row maxima [B, 1], where the caller has them."""
    if peak is None:
        peak = logits.amax(dim=-1, keepdim=True)
    return (logits.sub_(peak) if in_place else logits - peak).exp_()


def min_p_filter(weights: torch.Tensor, min_p: Seq[float]) -> torch.Tensor:
    """Zero, in place, the tokens less likely than min_p times the row's likeliest
    (transformers' and vLLM's MinPLogitsWarper). weights [B, V]: `unnormalised_probs` (after
    temperature, top-k and top-p), whose top is 1; min_p: each row's.

    One `threshold_` pass per distinct value (rows usually share one): a comparison mask and a
    masked_fill would be two passes and a [B, V] mask."""
    for value in sorted(set(min_p)):
        if value <= 0.0:
            continue
        # keep w >= min_p, i.e. w > the float just below it (threshold keeps x > threshold)
        below = float(torch.nextafter(torch.tensor(value, dtype=weights.dtype),
                                      torch.tensor(0.0, dtype=weights.dtype)))  # fmt: skip
        rows = [i for i, m in enumerate(min_p) if m == value]
        if len(rows) == len(min_p):
            torch.threshold_(weights, below, 0.0)
        else:
            index = torch.tensor(rows, device=weights.device)
            weights[index] = torch.threshold(weights[index], below, 0.0)
    return weights


def temper_late(probs: torch.Tensor, rows: list[int], temps: list[float]) -> torch.Tensor:
    """The temperature after truncation (llama.cpp's order), in place on `rows` of probs
    [B, V] (unnormalised, a zero is out): w ** (1 / T), computed as exp((log w - max) / T) so a
    small T cannot underflow the row to zeros; T below `GREEDY_TEMPERATURE` keeps only the
    likeliest token left (llama.cpp's temperature <= 0)."""
    index = torch.tensor(rows, device=probs.device)
    log_w = probs[index].log()  # [R, V]; -inf where out
    greedy = [j for j, t in enumerate(temps) if t < GREEDY_TEMPERATURE]
    scale = torch.tensor([1.0 if t < GREEDY_TEMPERATURE else 1.0 / t for t in temps],
                         device=probs.device).unsqueeze(1)  # fmt: skip
    log_w = log_w * scale
    top = log_w.amax(dim=-1, keepdim=True)
    tempered = (log_w - top).exp_()
    if greedy:
        g = torch.tensor(greedy, device=probs.device)
        best = tempered[g].argmax(dim=-1)
        tempered[g] = 0.0
        tempered[g, best] = 1.0
    probs[index] = tempered
    return probs
