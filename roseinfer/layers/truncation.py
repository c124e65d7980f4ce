"""The sampler's truncation and temperature passes over a batch's logits [B, V]: which tokens
each row keeps (top-k, top-p, min-p) and how they weigh (the temperature, before the
truncation as vLLM and transformers apply it, or after it as llama.cpp does: `temper_late`).
`Sampler` (sampler.py) runs them in its order; each works on every row at once."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence as Seq
from dataclasses import dataclass

import torch

from roseinfer.layers.draw import sample_candidates
from roseinfer.sampling_params import GREEDY_TEMPERATURE, SamplingParams

__all__ = [
    "Truncation",
    "CandidateOps",
    "apply_top_k_top_p",
    "draw_among",
    "expand",
    "likeliest",
    "logsumexp_rows",
    "min_p_filter",
    "temper_late",
    "truncate",
    "truncate_in_tiers",
    "unnormalised_probs",
]


# How many of a row's likeliest tokens the top-k/top-p pass looks among (a sort of the
# vocabulary costs 3 ms a row, BENCHMARKS.md session 56), then again for the rows whose set
# reached past them (SmolLM2 at T 1 and top-p 0.95: 28 % of rows need more than 256 tokens,
# 6.5 % more than 1,024, 0.1 % more than 4,096; BENCHMARKS.md session 57); past the last, the
# whole vocabulary (a sort).
CANDIDATES = 256
CANDIDATE_TIERS = (CANDIDATES, 1024, 4096)


def likeliest(logits: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's m likeliest logits (fp32) and their token ids [B, m], likeliest first, equal
    logits in token order. Which of the tokens tied with the m-th `topk` picks is its own:
    `truncate` reads past a tie at the m-th only with more candidates. (The backend's
    `top_candidates` picks the lower ids, faster.)"""
    if m == logits.shape[-1]:
        values, order = logits.float().sort(dim=-1, descending=True, stable=True)
        return values, order
    values, order = logits.topk(m, dim=-1)
    order, by_id = order.sort(dim=-1)
    values, by_value = values.gather(1, by_id).sort(dim=-1, descending=True, stable=True)
    return values.float(), order.gather(1, by_value)


def logsumexp_rows(rows: torch.Tensor) -> torch.Tensor:
    """Each row's log(sum(exp(row))): rows [R, V] -> [R] fp32 (the row's maximum taken out
    first; a NaN, or an infinite maximum, gives what that arithmetic gives)."""
    rows = rows.float()
    peak = rows.amax(dim=1, keepdim=True)
    return (rows - peak).exp_().sum(dim=1).log_() + peak.squeeze(1)


@dataclass(frozen=True, slots=True)
class CandidateOps:
    """The passes over whole rows that the truncation takes, and the draw among candidates
    (the backend's `top_candidates`, `logsumexp` and `sample_candidates`; torch's here by
    default)."""

    likeliest: Callable[[torch.Tensor, int], tuple[torch.Tensor, torch.Tensor]] = likeliest
    logsumexp: Callable[[torch.Tensor], torch.Tensor] = logsumexp_rows
    draw: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] = sample_candidates


@dataclass(frozen=True, slots=True)
class Truncation:
    """Each row's likeliest tokens after its top-k / top-p cut. `inside`: the rows with a k or
    a p whose kept set lies among these tokens (the others with one: more candidates,
    `truncate_in_tiers`); a row with neither keeps every token."""

    values: torch.Tensor  # [B, m] fp32: the logits, likeliest first; -inf where cut
    ids: torch.Tensor  # [B, m] int64: their tokens
    truncated: torch.Tensor  # [B] bool: the row has a k or a p
    inside: torch.Tensor  # [B] bool
    # [B] float: how many candidates a row not inside needs, at least up to float32's rounding
    # of its mass (a top-p row's, from the mass its p still lacks and the likeliest logit past
    # the m, which no token after weighs more than); m + 1 where nothing tells more; NaN (a
    # row with a NaN or an infinite logit): the vocabulary at once
    reach: torch.Tensor

    def select(self, rows: torch.Tensor) -> Truncation:
        """These rows' (rows [R] int64)."""
        return Truncation(self.values[rows], self.ids[rows], self.truncated[rows],
                          self.inside[rows], self.reach[rows])  # fmt: skip


def truncate(
    logits: torch.Tensor,
    top_k: torch.Tensor | None,
    top_p: torch.Tensor | None,
    ops: CandidateOps = CandidateOps(),
    candidates: int = CANDIDATES,
) -> Truncation:
    """Each row's top-k / top-p set (transformers' TopK then TopP warper) among its m
    likeliest tokens, m = max(`candidates`, the largest k), or the vocabulary where that is past
    a quarter of it: the top-k set is the tokens at or above the k-th logit, the top-p set the
    likeliest ones whose mass before them is under p (of the row's distribution after top-k).
    logits [B, V]; top_k [B] (0: none), top_p [B] (1: none).

    A row is `inside` when no token past the m can be kept: its kept tokens are all likelier
    than the (m+1)-th, its k-th logit too (the top-p normaliser reads the whole top-k set), and
    its k (k <= m) or its p's cut among the m bounds the set (or the (m+1)-th logit is -inf, or
    m is the vocabulary). The arithmetic reads only a row's own kept prefix (the normaliser a
    running total in float64): a row keeps the same set whatever m, and whatever else is in the
    batch."""
    vocab = logits.shape[-1]
    k = None if top_k is None else torch.where(top_k > 0, top_k, vocab).clamp(max=vocab)
    largest = 0 if k is None else int(torch.where(k < vocab, k, 0).max())
    m = min(vocab, max(candidates, largest))
    if m > vocab // 4:
        m = vocab
    no = torch.zeros(logits.shape[0], dtype=torch.bool, device=logits.device)
    limited = no if k is None else k < vocab
    cutting = no if top_p is None else top_p < 1  # (1: no cut, rounding)
    truncated = limited | cutting
    values, ids = ops.likeliest(logits, min(m + 1, vocab))
    if m < vocab:
        following = values[:, m]  # the likeliest logit past the candidates
        values, ids = values[:, :m], ids[:, :m]
    else:
        following = torch.full_like(values[:, 0], float("-inf"))
    whole_k = torch.ones_like(no)  # the top-k set ends among the candidates
    if k is not None:
        kth = values.gather(1, (k.clamp(max=m) - 1).unsqueeze(1))  # [B, 1]
        kth = torch.where(limited.unsqueeze(1), kth, float("-inf"))
        values = values.masked_fill(values < kth, float("-inf"))
        whole_k = ~limited | (kth.squeeze(1) > following)
    reach = torch.full_like(following, float(m + 1))
    if top_p is not None:
        # the row's distribution after top-k: over its top-k set where it has a k (a running
        # total in float64: zeros past the set change nothing), else over all its logits
        peak = values[:, :1].masked_fill(values[:, :1].isinf(), 0.0)
        unlimited = cutting & ~limited
        if bool((cutting & limited).any()):
            weights = (values - peak).exp_().double().cumsum(dim=-1)[:, -1]
            total = (weights.log_() + peak.squeeze(1)).float()
        else:  # (no row's p reads its top-k set: the others' total is unread, kept finite)
            total = peak.squeeze(1).clone()
        if bool(unlimited.any()):
            rows = unlimited.nonzero().squeeze(1)
            every = len(rows) == len(logits)
            total[rows] = ops.logsumexp(logits if every else logits[rows])
        probs = (values - total.unsqueeze(1)).exp()  # [B, m]
        before = probs.cumsum(dim=-1) - probs  # the mass of the likelier candidates
        if m < vocab:  # (a row without a k: each token past the m weighs at most the next's)
            # (less the rounding of the m's float32 mass, which the cut reads as it is: a
            # bound too high would send the row past a tier that holds it, at a larger pass)
            lacking = top_p - (before[:, -1] + probs[:, -1]) - m * torch.finfo(torch.float32).eps
            past = m + lacking / (following - total).exp()
            reach = torch.where(unlimited, torch.maximum(reach, past), reach)
        cut = (before >= top_p.unsqueeze(1)) & cutting.unsqueeze(1)
        cut[:, 0] = False  # the likeliest always stays (a p under float32's least is 0 here)
        values = values.masked_fill(cut, float("-inf"))
    least = values.masked_fill(values.isneginf(), float("inf")).amin(dim=-1)
    bounded = limited | values[:, -1].isneginf()
    inside = truncated & (following.isneginf() | ((least > following) & bounded & whole_k))
    return Truncation(values, ids, truncated, inside, reach)


def truncate_in_tiers(
    logits: torch.Tensor,
    top_k: torch.Tensor | None,
    top_p: torch.Tensor | None,
    ops: CandidateOps = CandidateOps(),
) -> list[tuple[list[int], Truncation]]:
    """`truncate` over the rows among `CANDIDATE_TIERS[0]` candidates, then over the rows whose
    set reached past them among the first later tier that can hold it (`Truncation.reach`),
    and so on, the last the vocabulary (where a row with a k past a quarter of it goes at once,
    so that it does not widen the others'): [(rows of the batch, their Truncation)]; each
    truncated row inside one of them. (A row keeps the same set whatever the tier: skipping
    one saves its pass, nothing else.)"""
    vocab = logits.shape[-1]
    wide: list[int] = []
    if top_k is not None:
        wide = [r for r, k in enumerate(top_k.tolist()) if vocab // 4 < k < vocab]
    pending = [(r, 0.0) for r in range(len(logits)) if r not in wide]  # (row, its reach)
    tiers = []
    for candidates in (*CANDIDATE_TIERS, vocab):
        last = candidates == vocab
        rows = sorted(r for r, reach in pending if last or reach <= candidates)
        pending = [(r, reach) for r, reach in pending if not (last or reach <= candidates)]
        if last:
            rows = sorted(rows + wide)
        if not rows:
            continue
        x, k, p = logits, top_k, top_p
        if len(rows) < len(logits):
            index = torch.tensor(rows, device=logits.device)
            x = logits[index]
            k = None if top_k is None else top_k[index]
            p = None if top_p is None else top_p[index]
        truncation = truncate(x, k, p, ops, candidates)
        tiers.append((rows, truncation))
        past = (truncation.truncated & ~truncation.inside).tolist()
        reach = truncation.reach.tolist()
        pending += [(r, reach[j]) for j, r in enumerate(rows) if past[j]]
    return tiers


def expand(
    logits: torch.Tensor,
    tiers: Seq[tuple[list[int], Truncation]],
    rows: Seq[int] | None = None,
) -> torch.Tensor:
    """logits [R, V], the batch's `rows` (in order; None: every row), with -inf outside each
    truncated row's set, from the tier it lies inside (`truncate_in_tiers`); a row with no k
    and no p as it is."""
    out = torch.full_like(logits, float("-inf"))
    at = {r: j for j, r in enumerate(range(len(logits)) if rows is None else rows)}
    kept_rows: set[int] = set()
    for tier_rows, truncation in tiers:
        inside = truncation.inside.tolist()
        pairs = [(j, at[r]) for j, r in enumerate(tier_rows) if inside[j] and r in at]
        kept_rows.update(target for _, target in pairs)
        if len(pairs) == len(out) == len(tier_rows):  # (every row, in order: in place)
            out.scatter_(1, truncation.ids, truncation.values)
        elif pairs:
            source = torch.tensor([j for j, _ in pairs], device=logits.device)
            target = torch.tensor([j for _, j in pairs], device=logits.device)
            kept = out[target].scatter_(1, truncation.ids[source], truncation.values[source])
            out[target] = kept
    untouched = [j for j in range(len(out)) if j not in kept_rows]  # (no k, no p)
    if untouched:
        index = torch.tensor(untouched, device=logits.device)
        out[index] = logits[index]
    return out


def apply_top_k_top_p(
    logits: torch.Tensor,
    top_k: torch.Tensor | None,
    top_p: torch.Tensor | None,
    ops: CandidateOps = CandidateOps(),
) -> torch.Tensor:
    """Mask logits outside each row's top-k / top-p set with -inf (transformers' TopK then
    TopP warper): `truncate_in_tiers`, then `expand`. logits [B, V]; top_k [B] (0: none),
    top_p [B] (1: none)."""
    return expand(logits, truncate_in_tiers(logits, top_k, top_p, ops))


# exp's floor in a row most of whose logits are masked: CPU's exp takes a slow path on inputs
# whose result underflows (-inf included), 2.8 against 1.4 ms at batch 32 with this floor
# (BENCHMARKS.md session 56); exp(-87) is a normal float, 1.6e-38 of the likeliest token's
# (`FLOOR_WEIGHT`: what logprobs count as 0)
EXP_FLOOR = -87.0
FLOOR_WEIGHT = float(torch.tensor(EXP_FLOOR).exp())


def unnormalised_probs(
    logits: torch.Tensor,
    in_place: bool = False,
    peak: torch.Tensor | None = None,
    masked: Seq[bool] = (),
) -> torch.Tensor:
    """exp(logits - row max) [B, V]: each row's probabilities times a constant, its top one
    exactly 1 (what `min_p_filter` and `sample_from` take; a softmax would also divide).
    `in_place`: into `logits` (a tensor the sampler made), sparing a [B, V] allocation;
    `peak`: the row maxima [B, 1], where the caller has them; `masked`: the rows many of whose
    logits are -inf (truncated or masked): theirs floored at `EXP_FLOOR`, the -inf ones exactly
    0 (a row's own: the others' exact)."""
    if peak is None:
        peak = logits.amax(dim=-1, keepdim=True)
    shifted = logits.sub_(peak) if in_place else logits - peak
    if not any(masked):
        return shifted.exp_()
    gone = shifted.isneginf()
    if all(masked):
        shifted.clamp_(min=EXP_FLOOR)
    else:
        floor = [EXP_FLOOR if m else float("-inf") for m in masked]
        shifted.clamp_(min=torch.tensor(floor, device=logits.device).unsqueeze(1))
    return shifted.exp_().masked_fill_(gone, 0.0)


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


def temper_late(
    probs: torch.Tensor, logits: torch.Tensor, rows: list[int], temps: list[float]
) -> torch.Tensor:
    """The temperature after the infill filter (llama.cpp's order, where the filter reads the
    untempered weights), in place on `rows` of probs [B, V] (unnormalised; a zero is out: the
    rows are truncated, so their exp is floored, nothing underflows): from those rows' logits
    [R, V] (untempered, as the truncation left them) the tokens kept, divided by T and
    exponentiated; T below `GREEDY_TEMPERATURE` keeps only the likeliest token left
    (llama.cpp's temperature <= 0)."""
    index = torch.tensor(rows, device=probs.device)
    kept = probs[index] > 0
    scaled = logits.masked_fill(~kept, float("-inf"))
    # (a token kept that the truncation had cut: the infill filter's end token, alone)
    scaled.masked_fill_(kept & scaled.isneginf(), 0.0)
    scale = [1.0 if t < GREEDY_TEMPERATURE else 1.0 / t for t in temps]
    scaled.mul_(torch.tensor(scale, device=probs.device).unsqueeze(1))
    tempered = unnormalised_probs(scaled, in_place=True, masked=[True] * len(rows))
    greedy = [j for j, t in enumerate(temps) if t < GREEDY_TEMPERATURE]
    if greedy:
        g = torch.tensor(greedy, device=probs.device)
        best = tempered[g].argmax(dim=-1)
        tempered[g] = 0.0
        tempered[g, best] = 1.0
    probs[index] = tempered
    return probs


@dataclass(frozen=True, slots=True)
class Late:
    """The temperature after the truncation (`temperature_last`, llama.cpp's order) for a
    batch: `scale` [B] multiplies each row's truncated logits (1/T; 1 for the others), `min_p`
    [B] each row's min-p read on those tempered weights (w >= m is w ** (1/T) >= m ** (1/T));
    `after_filters`: the rows that take it after the infill filter or XTC instead
    (`temper_late`: those read the untempered weights)."""

    scale: list[float]
    min_p: list[float]
    after_filters: frozenset[int]

    @staticmethod
    def of(params: Seq[SamplingParams], greedy: Seq[bool]) -> Late:
        late = [i for i, (g, p) in enumerate(zip(greedy, params, strict=True))
                if not g and p.temperature_last and p.temperature != 1.0]  # fmt: skip
        now = {i for i in late if not (params[i].infill or params[i].uses_xtc)}
        scale = [1.0 / p.temperature if i in now else 1.0 for i, p in enumerate(params)]
        min_p = [p.min_p ** scale[i] for i, p in enumerate(params)]
        return Late(scale, min_p, frozenset(late) - now)

    def of_rows(self, rows: Seq[int]) -> Late:
        """These rows' (in their order)."""
        if len(rows) == len(self.scale):  # (rows are in order: every row)
            return self
        after = frozenset(j for j, i in enumerate(rows) if i in self.after_filters)
        return Late([self.scale[i] for i in rows], [self.min_p[i] for i in rows], after)

    def scales(self, device: torch.device) -> torch.Tensor:
        """`scale` as a column [B, 1]."""
        return torch.tensor(self.scale, device=device).unsqueeze(1)


@dataclass(frozen=True, slots=True)
class Drawn:
    """What `draw_among` gives for its rows: each one's token [R] int64, its largest logit
    after a late temperature (NaN or inf: not finite), and the weights it was drawn from [R, m]
    (unnormalised, over its candidates' ids)."""

    token_ids: torch.Tensor
    peaks: list[float]
    weights: torch.Tensor


def draw_among(
    truncation: Truncation,
    late: Late,
    u: torch.Tensor,
    draw: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] = sample_candidates,
) -> Drawn:
    """The rows' draws among their candidates (rows `inside` their truncation), from `late`
    (the rows', none after an infill filter) and uniforms u [R] float64: the weights `Sampler`
    would hand `sample_from` over the vocabulary, the candidates' alone (`draw`:
    `sample_candidates`, or the backend's)."""
    values = truncation.values * late.scales(u.device)  # [R, m]
    peak = values[:, :1].clone()  # the likeliest, always kept
    weights = unnormalised_probs(values, True, peak, [True] * len(late.scale))
    if any(m > 0.0 for m in late.min_p):
        weights = min_p_filter(weights, late.min_p)
    return Drawn(draw(weights, truncation.ids, u), peak.view(-1).tolist(), weights)
