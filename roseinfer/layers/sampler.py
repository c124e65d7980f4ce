"""Batched sampling: one call for the whole batch, each row with its own SamplingParams.

Logprobs (`SamplingParams.logprobs`) are taken first, of the raw logits: the model's
distribution, as vLLM V1 reports it (with `logprobs_processed`, llama.cpp's
`post_sampling_probs`: of the distribution the token is drawn from, after everything below).
Then, in vLLM's order: the masks (`allowed_token_ids`, `bad_words`, `min_tokens`' stop tokens,
the grammar's bitmask: roseinfer/layers/masks.py), `logit_bias` (added),
then the penalties (`repetition_penalty` over prompt and generated tokens, then
`frequency_penalty` and `presence_penalty` over the generated ones), then llama.cpp's DRY
(roseinfer/layers/dry.py); greedy rows take their argmax here, after penalties and bias.
Sampled rows then divide by their temperature and keep their top-k, then top-p, then min-p set
(vLLM V0's and transformers' warper order; vLLM V1 applies min-p before top-k/top-p, which
differs only when min-p and top-k/top-p are combined).
Rows with `temperature_last` (llama.cpp's order) keep that set of their untempered
distribution and take the temperature after it; rows with XTC (roseinfer/layers/xtc.py), then
rows with `infill` (llama.cpp's infill filter, roseinfer/layers/infill.py), pass those after
the truncation, before a late temperature.
A sampled row with a top-k or a top-p draws among its likeliest tokens alone: its 256 (most
rows), else its 1,024, its 4,096 or its whole vocabulary, whichever first holds its set
(`truncate_in_tiers`, roseinfer/layers/truncation.py; the draws in roseinfer/layers/draw.py);
rows with neither, and those the infill filter reads, draw over the vocabulary.

Each step pays only for what some row of it asks for: every feature is an `any(...)` over the
batch's params, and a batch that uses none runs the plain path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq
from dataclasses import dataclass, field

import torch

from roseinfer.layers.draw import sample_from
from roseinfer.layers.dry import DryBreakers
from roseinfer.layers.infill import InfillFilter
from roseinfer.layers.logprobs import (
    LogprobOps,
    LogprobsTensors,
    RawLogits,
    drawn_logprobs,
    merged,
)
from roseinfer.layers.masks import RowState, mask, masks_write, rows_and_ids
from roseinfer.layers.penalties import History, TokenCounts, apply_penalties
from roseinfer.layers.truncation import (
    CandidateOps,
    Late,
    Truncation,
    apply_top_k_top_p,
    draw_among,
    expand,
    min_p_filter,
    temper_late,
    truncate_in_tiers,
    unnormalised_probs,
)
from roseinfer.layers.xtc import xtc_filter
from roseinfer.sampling_params import SamplingParams
from roseinfer.structured.grammar import apply_bitmask

__all__ = [
    "History",
    "RowState",
    "Sampler",
    "SamplerOutput",
    "TokenCounts",
    "apply_penalties",
    "apply_top_k_top_p",
    "greedy_argmax",
    "min_p_filter",
    "sample_from",
    "unnormalised_probs",
]


# Why a row of `SamplerOutput.no_token_rows` / `non_finite_rows` has no token.
NO_TOKEN = (
    "no token may be generated: allowed_token_ids, bad_words, min_tokens and the grammar "
    "exclude every token"
)
NOT_FINITE = "the model's logits for this request are not finite (NaN or inf)"


def greedy_argmax(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row's first maximal index [B] int64 and that maximum [B] fp32 (a NaN's index and NaN
    where the row holds one), on the model-dtype logits (the same values, so the same token,
    with no fp32 copy). `max` returns the first maximal index like `argmax`, and is faster on
    bf16 (BENCHMARKS.md, "What each optimisation bought")."""
    values, ids = logits.max(dim=-1)
    return ids, values.float()


@dataclass(frozen=True, slots=True)
class SamplerOutput:
    """Each row's token [B] int64; with `logprob_rows` (the rows whose params ask for logprobs,
    in order) their logprobs, of the raw logits (or of the distribution drawn from, for rows
    with `logprobs_processed`). Rows without a token (their token ids are
    meaningless): `no_token_rows`, whose masks exclude every token (the request's own doing),
    and `non_finite_rows`, whose logits hold NaN or +inf (a broken model)."""

    token_ids: torch.Tensor
    logprob_rows: list[int]
    logprobs: LogprobsTensors | None = None
    no_token_rows: list[int] = field(default_factory=list)
    non_finite_rows: list[int] = field(default_factory=list)


class Sampler:
    """Greedy rows take the argmax; sampled rows draw by inverse CDF (`sample_from`). Rows with a
    `seed` draw their uniform from their own generator, so a seeded request's draws do not
    depend on what else is in the batch (its logits may, by rounding: README, "Alone or
    batched")."""

    def __init__(
        self,
        device: torch.device | str,
        seed: int,
        stop_token_ids: Iterable[int],
        argmax: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]] = greedy_argmax,
        apply_bitmask: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None] = apply_bitmask,
        logprob_ops: LogprobOps = LogprobOps(),
        infill: InfillFilter | None = None,
        candidate_ops: CandidateOps = CandidateOps(),
    ) -> None:
        """`argmax`: the greedy rows' [B, V] -> ([B] int64, their maxima [B] fp32);
        `apply_bitmask`: the grammars' masks, in place; `logprob_ops`: logprobs' passes over
        their rows (the backend's: `Backend.argmax`, `Backend.apply_bitmask`, ...); `infill`:
        llama.cpp's infill filter over the vocabulary, for rows whose params ask for it;
        `candidate_ops`: the top-k / top-p passes over whole rows and the draw among candidates
        (`Backend.top_candidates`, `Backend.logsumexp`, `Backend.sample_candidates`)."""
        self.device = torch.device(device)
        self.argmax = argmax
        self.apply_bitmask = apply_bitmask
        self.logprob_ops = logprob_ops
        self.generator = torch.Generator(self.device).manual_seed(seed)
        self.stop_token_ids = torch.tensor(
            sorted(stop_token_ids), dtype=torch.long, device=self.device
        )
        self.token_counts = TokenCounts(self.device)
        self.infill = infill
        self.ops = candidate_ops

    def new_row_state(
        self,
        params: SamplingParams,
        bad_words: Seq[tuple[int, ...]] = (),
        dry_breakers: DryBreakers | None = None,
    ) -> RowState:
        """A sequence's state (`bad_words`: its bad words' token ids; `dry_breakers`: its DRY
        sequence breakers')."""
        return RowState.of(params, bad_words, self.device, dry_breakers)

    @torch.inference_mode()
    def __call__(
        self,
        logits: torch.Tensor,  # [B, V]
        params: Seq[SamplingParams],
        states: Seq[RowState],  # each row's (`new_row_state`)
        num_outputs: Seq[int],  # tokens each row has generated so far (for min_tokens)
        histories: Seq[History] | None = None,  # each row's sequence (penalties, bad words)
    ) -> SamplerOutput:
        """Masks (allowed_token_ids, bad_words, min_tokens) are written into `logits`; bias
        and penalties work on a copy. A row fails alone (`SamplerOutput.no_token_rows`,
        `non_finite_rows`) when its masks leave no token, or its logits are NaN or +inf."""
        logprob_rows = [i for i, p in enumerate(params) if p.logprobs is not None]
        # (rows that list their tokens need no top K: `with_listed`)
        k = max((params[i].logprobs or 0 for i in logprob_rows
                 if params[i].logprob_token_ids is None), default=0)  # fmt: skip
        drawn_rows = [i for i in logprob_rows if params[i].logprobs_processed]
        raw_rows = [i for i in logprob_rows if not params[i].logprobs_processed]
        raw: RawLogits | None = None
        if raw_rows:  # of the model's distribution, before anything below changes it
            every = len(raw_rows) == len(params)
            rows = logits if every else logits[raw_rows]  # (indexing copies)
            if rows.data_ptr() == logits.data_ptr() and any(
                masks_write(params[i], num_outputs[i]) for i in raw_rows
            ):
                rows = rows.clone()  # the masks below write into `logits`
            raw = RawLogits.of(rows, k, self.logprob_ops)
        no_token = mask(logits, params, states, num_outputs, histories, self.stop_token_ids,
                        self.apply_bitmask)  # fmt: skip
        token_ids, non_finite, drawn = self._sample(logits, params, states, histories, drawn_rows)
        non_finite = [i for i in non_finite if i not in no_token]
        if not logprob_rows:
            return SamplerOutput(token_ids, [], None, no_token, non_finite)
        parts = []
        if raw is not None:
            chosen = token_ids if len(raw_rows) == len(params) else token_ids[raw_rows]
            listed = [params[i].logprob_token_ids for i in raw_rows]
            parts.append((raw_rows, raw.logprobs(chosen, listed)))
        if drawn_rows:
            chosen = token_ids[drawn_rows]
            parts.append((drawn_rows, drawn_logprobs(drawn, chosen, logits.shape[-1], k)))
        return SamplerOutput(token_ids, logprob_rows, merged(parts), no_token, non_finite)

    def _sample(
        self,
        logits: torch.Tensor,
        params: Seq[SamplingParams],
        states: Seq[RowState],
        histories: Seq[History] | None,
        drawn_rows: Seq[int] = (),
    ) -> tuple[torch.Tensor, list[int], torch.Tensor | None]:
        """(each row's token [B] int64, the rows whose logits were not finite: the greedy
        argmax lands on a NaN if the row has one, and a row's maximum is NaN or +inf if any
        of its logits is, so checking those costs no pass over the vocabulary; and the weights
        `drawn_rows` were drawn from [D, V], a greedy row's its token alone, None where every
        row is greedy). The check reads those maxima as Python floats: after a step has
        streamed the weights through the caches, every further tensor op costs tens of
        microseconds (BENCHMARKS.md)."""
        dev = logits.device
        given = logits  # the caller's: never changed below (logprobs may still read it)
        need_bias = any(p.logit_bias for p in params)
        need_penalties = any(p.uses_penalties for p in params)
        need_dry = any(p.uses_dry for p in params)
        if need_bias or need_penalties or need_dry:
            logits = logits.to(torch.float32, copy=True)  # the caller's logits stay as they were
        if need_bias:
            biased, bias_ids, bias_values = [], [], []
            for i, state in enumerate(states):
                if state.bias_ids is not None and state.bias_values is not None:
                    biased.append(i)
                    bias_ids.append(state.bias_ids)
                    bias_values.append(state.bias_values)
            rows, ids = rows_and_ids(bias_ids, dev, biased)
            values = torch.cat(bias_values)
            logits.index_put_((rows, ids), values, accumulate=True)
        if need_penalties:
            if histories is None:
                raise ValueError("penalties need each row's sequence (histories)")
            pen = [i for i, p in enumerate(params) if p.uses_penalties]
            seen = self.token_counts.gather([histories[i] for i in pen], pen, logits.shape[-1],
                                            [params[i].penalty_last_n for i in pen])  # fmt: skip

            def column(name: str) -> torch.Tensor:
                return torch.tensor([getattr(p, name) for p in params], device=dev)

            apply_penalties(
                logits,
                seen,
                column("repetition_penalty"),
                column("frequency_penalty"),
                column("presence_penalty"),
            )
        if need_dry:  # after the penalties (llama.cpp's chain), before greedy rows' argmax
            if histories is None:
                raise ValueError("DRY needs each row's sequence (histories)")
            for i, state in enumerate(states):
                if state.dry is not None:
                    lowered = state.dry.penalties(histories[i].token_ids)
                    if lowered is not None:
                        logits[i].index_add_(0, lowered[0], lowered[1], alpha=-1)
        # greedy rows take the argmax now, but where the temperature comes after the infill
        # filter or XTC, which may leave out the likeliest token (`temper_late`)
        greedy = [p.greedy and not ((p.infill or p.uses_xtc) and p.temperature_last)
                  for p in params]  # fmt: skip
        greedy_ids = None
        peaks = [0.0] * len(params)  # each row's largest logit as drawn: NaN or inf, not finite
        if any(greedy):
            greedy_ids, maxima = self.argmax(logits)  # model dtype, or the fp32 copy
            peaks = maxima.tolist()  # a greedy row's maximum is its chosen token's logit
            if all(greedy):
                return greedy_ids, _not_finite(peaks), None
        temps = [1.0 if g or p.temperature_last else p.temperature
                 for g, p in zip(greedy, params, strict=True)]  # fmt: skip
        fp32 = logits.float()
        if any(t != 1.0 for t in temps):
            scale = torch.tensor(temps, device=dev).unsqueeze(1)
            # (in place into a copy the sampler made: a pass and a [B, V] allocation fewer)
            fp32 = fp32 / scale if fp32 is given else fp32.div_(scale)
        logits = fp32
        # a sampled row with a k or a p draws among its likeliest tokens (the tier it lies
        # inside); one the infill filter or XTC reads, over the vocabulary
        eligible = [not g and not (p.infill or p.uses_xtc)
                    for g, p in zip(greedy, params, strict=True)]  # fmt: skip
        tiers: list[tuple[list[int], Truncation]] = []
        if any(p.top_k > 0 or p.top_p < 1.0 for p in params):
            top_k, top_p = self._top_k_top_p(params, logits.shape[-1], dev)
            tiers = truncate_in_tiers(logits, top_k, top_p, self.ops)
        late = Late.of(params, greedy)
        u = torch.rand(len(params), generator=self.generator, dtype=torch.float64, device=dev)
        for i, state in enumerate(states):
            if state.generator is not None:
                u[i] = torch.rand(1, generator=state.generator, dtype=torch.float64, device=dev)
        tokens = greedy_ids  # (the argmax's own tensor: the draws below write into it)
        if tokens is None:
            tokens = torch.zeros(len(params), dtype=torch.long, device=dev)
        drawn = None
        if drawn_rows:  # (a greedy row's: zeros, its token alone for `drawn_logprobs`)
            drawn = torch.zeros(len(drawn_rows), logits.shape[-1], device=dev)
        drawn_at = {i: j for j, i in enumerate(drawn_rows)}
        drawn_among_rows: set[int] = set()
        for tier_rows, truncation in tiers:
            inside = truncation.inside.tolist()
            local = [j for j, r in enumerate(tier_rows) if inside[j] and eligible[r]]
            if not local:
                continue
            among = [tier_rows[j] for j in local]
            index = torch.tensor(among, device=dev)
            candidates = truncation.select(torch.tensor(local, device=dev))
            got = draw_among(candidates, late.of_rows(among), u[index], self.ops.draw)
            tokens[index] = got.token_ids
            for j, r in enumerate(among):
                peaks[r] = got.peaks[j]
                if drawn is not None and r in drawn_at:
                    drawn[drawn_at[r]].scatter_(0, candidates.ids[j], got.weights[j])
            drawn_among_rows.update(among)
        rest = [i for i in range(len(params)) if not greedy[i] and i not in drawn_among_rows]
        if rest:
            probs, rest_peaks = self._weights(
                logits, given, tiers, rest, params, states, late.of_rows(rest)
            )
            if len(rest) == len(params):
                tokens = sample_from(probs, u)
            else:
                index = torch.tensor(rest, device=dev)
                tokens[index] = sample_from(probs, u[index])
            for i, v in zip(rest, rest_peaks, strict=True):
                peaks[i] = v
            for j, i in enumerate(rest):
                if drawn is not None and i in drawn_at:
                    drawn[drawn_at[i]] = probs[j]
        return tokens, _not_finite(peaks), drawn

    @staticmethod
    def _top_k_top_p(
        params: Seq[SamplingParams], vocab: int, device: torch.device
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """Each row's top_k [B] (0: none; any larger than the vocabulary keeps every token) and
        top_p [B], or None where no row has one."""
        top_k = top_p = None
        if any(p.top_k > 0 for p in params):
            top_k = torch.tensor([min(p.top_k, vocab) for p in params], device=device)
        if any(p.top_p < 1.0 for p in params):
            top_p = torch.tensor([p.top_p for p in params], device=device)
        return top_k, top_p

    def _weights(
        self,
        logits: torch.Tensor,
        given: torch.Tensor,
        tiers: list[tuple[list[int], Truncation]],
        rows: list[int],
        params: Seq[SamplingParams],
        states: Seq[RowState],
        late: Late,  # the rows'
    ) -> tuple[torch.Tensor, list[float]]:
        """The weights [R, V] `rows` draw from over the whole vocabulary (unnormalised; each
        row's likeliest 1), and each row's largest logit: rows with neither k nor p, and those
        the infill filter or XTC reads. `given`: the caller's logits, never written."""
        dev = logits.device
        x = logits
        if len(rows) < len(params):
            x = logits[torch.tensor(rows, device=dev)]  # (indexing copies)
            params, states = [params[i] for i in rows], [states[i] for i in rows]
        if tiers:
            x = expand(x, tiers, rows)
        # the temperature after the truncation (llama.cpp's order): now, min-p's cut read on
        # the tempered weights (w >= m is w ** (1/T) >= m ** (1/T)), but where the infill filter
        # or XTC reads the untempered ones (`temper_late`, after them)
        if any(scale != 1.0 for scale in late.scale):
            x = x * late.scales(dev)
        peak = x.amax(dim=-1, keepdim=True)  # [R, 1]
        masked = [p.top_k > 0 or p.top_p < 1.0 or bool(p.allowed_token_ids)
                  or p.structured_outputs is not None for p in params]  # fmt: skip
        after = sorted(late.after_filters)
        after_logits = x[after] if after else None  # (a copy, as the truncation left them)
        probs = unnormalised_probs(x, x is not given, peak, masked)
        if any(m > 0.0 for m in late.min_p):
            probs = min_p_filter(probs, late.min_p)
        if any(p.uses_xtc for p in params):  # (its own draw: the row's generator, if seeded)
            draws = [self._uniform(s) if p.uses_xtc else 1.0 for p, s in zip(params, states,
                                                                              strict=True)]  # fmt: skip
            probs = xtc_filter(probs, [p.xtc_probability if p.uses_xtc else 0.0 for p in params],
                               [p.xtc_threshold for p in params], draws)  # fmt: skip
        if any(p.infill for p in params):
            probs = self._infill(probs, params, states)
        if after_logits is not None:
            probs = temper_late(probs, after_logits, after, [params[j].temperature for j in after])
        return probs, peak.view(-1).tolist()

    def _uniform(self, state: RowState) -> float:
        """A draw in [0, 1) from the row's own generator (seeded), else the sampler's."""
        generator = state.generator if state.generator is not None else self.generator
        return float(torch.rand(1, generator=generator, dtype=torch.float64,
                                device=self.device))  # fmt: skip

    def _infill(
        self, probs: torch.Tensor, params: Seq[SamplingParams], states: Seq[RowState]
    ) -> torch.Tensor:
        """llama.cpp's infill filter on each row that asks for it (a Python pass over the
        candidates the truncation left: llama.vim's 40). Its end tokens: the model's and the
        request's stop tokens."""
        if self.infill is None:
            raise ValueError("the infill sampler needs the vocabulary (Sampler's `infill`)")
        model_ends = self.stop_token_ids.tolist()
        for i, p in enumerate(params):
            if p.infill:
                stop_ids = states[i].stop_ids
                request_ends = [] if stop_ids is None else stop_ids.tolist()
                self.infill(probs[i], model_ends + request_ends)  # (in place)
        return probs


def _not_finite(values: list[float]) -> list[int]:
    return [i for i, v in enumerate(values) if not math.isfinite(v)]
