"""Batched sampling: one call for the whole batch, each row with its own SamplingParams.

The order is vLLM's: on the raw logits, `min_tokens` (stop tokens masked), `logit_bias` (added),
then the penalties (`repetition_penalty` over prompt and generated tokens, then
`frequency_penalty` and `presence_penalty` over the generated ones); greedy rows take their
argmax here, after penalties and bias. Sampled rows then divide by their temperature and keep
their top-k, then top-p, then min-p set (vLLM V0's and transformers' warper order; vLLM V1
applies min-p before top-k/top-p, which differs only when min-p and top-k/top-p are combined).

Each step pays only for what some row of it asks for: every feature is an `any(...)` over the
batch's params, and a batch that uses none runs the plain path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq
from typing import Protocol

import torch

from roseinfer.config import SamplingParams


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


def apply_min_p(logits: torch.Tensor, min_p: torch.Tensor) -> torch.Tensor:
    """Mask tokens whose probability is below min_p times the row's top probability (vLLM's and
    transformers' MinPLogitsWarper). logits [B, V] (after temperature); min_p [B]."""
    probs = logits.softmax(dim=-1)
    floor = min_p.unsqueeze(1) * probs.max(dim=-1, keepdim=True).values
    return logits.masked_fill(probs < floor, float("-inf"))


def apply_penalties(
    logits: torch.Tensor,  # [B, V] float
    counts: torch.Tensor,  # [B, V] int: each token's count among the generated tokens
    in_prompt: torch.Tensor,  # [B, V] bool: the token is in the prompt
    repetition: torch.Tensor,  # [B]
    frequency: torch.Tensor,  # [B]
    presence: torch.Tensor,  # [B]
) -> torch.Tensor:
    """vLLM's penalties. Repetition (CTRL, transformers' RepetitionPenaltyLogitsProcessor): a
    token seen in the prompt or the output has its logit divided by p if positive, multiplied
    by p if not. Then OpenAI's: logit - frequency * count - presence * [count > 0], over the
    generated tokens only."""
    seen = counts > 0
    p = repetition.unsqueeze(1)
    penalised = torch.where(logits > 0, logits / p, logits * p)
    logits = torch.where(seen | in_prompt, penalised, logits)
    return logits - frequency.unsqueeze(1) * counts - presence.unsqueeze(1) * seen


class History(Protocol):
    """What the penalties read of a sequence (engine.sequence.Sequence is one)."""

    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int

    @property
    def is_finished(self) -> bool: ...


class TokenCounts:
    """Per-sequence token counts for the penalties, kept on the sampler's device and updated
    incrementally: one dense row per sequence that uses penalties (`counts` [S, V] int32 of its
    generated tokens, `in_prompt` [S, V] bool), never one per batch row of plain requests.

    A row is derived from the sequence's own token ids: it records how many generated tokens it
    has counted, adds the new ones each step (one batched `index_put_` for the batch) and is
    rebuilt from scratch when that number does not match (a sequence preempted and recomputed,
    or anything else that rewrote its tokens). Rows of finished sequences are reused."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.counts: torch.Tensor | None = None
        self.in_prompt: torch.Tensor | None = None
        self.slots: dict[int, tuple[History, int, int]] = {}  # seq_id -> (seq, row, counted)

    def _reserve(self, n: int, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
        """At least `n` rows of `vocab` columns, the used ones kept (doubling as it grows)."""
        counts, in_prompt = self.counts, self.in_prompt
        if counts is None or in_prompt is None or counts.shape[1] != vocab:
            counts = in_prompt = None
            self.slots.clear()
        if counts is None or in_prompt is None or counts.shape[0] < n:
            size = max(n, 8, 0 if counts is None else 2 * counts.shape[0])
            grown = torch.zeros(size, vocab, dtype=torch.int32, device=self.device)
            grown_prompt = torch.zeros(size, vocab, dtype=torch.bool, device=self.device)
            if counts is not None and in_prompt is not None:
                grown[: counts.shape[0]] = counts
                grown_prompt[: counts.shape[0]] = in_prompt
            counts, in_prompt = grown, grown_prompt
        self.counts, self.in_prompt = counts, in_prompt
        return counts, in_prompt

    @torch.inference_mode()  # its rows are inference tensors, whoever calls first
    def gather(self, seqs: Seq[History], vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(counts [B, V], in_prompt [B, V]) of `seqs`, brought up to date."""
        for sid in [k for k, (s, _, _) in self.slots.items() if s.is_finished]:
            del self.slots[sid]
        for s in seqs:  # another sequence under a known id: its row is stale
            if s.seq_id in self.slots and self.slots[s.seq_id][0] is not s:
                del self.slots[s.seq_id]
        new = [s for s in seqs if s.seq_id not in self.slots]
        counts, in_prompt = self._reserve(len(self.slots) + len(new), vocab)
        new = [s for s in seqs if s.seq_id not in self.slots]  # all of them if it reset
        used = {row for _, row, _ in self.slots.values()}
        free = (r for r in range(counts.shape[0]) if r not in used)
        for s in new:
            self.slots[s.seq_id] = (s, next(free), -1)
        rebuild: list[int] = []
        rows: list[int] = []
        add_rows: list[int] = []
        add_ids: list[int] = []
        prompt_rows: list[int] = []
        prompt_ids: list[int] = []
        for s in seqs:
            _, row, counted = self.slots[s.seq_id]
            out = s.token_ids[s.num_prompt_tokens :]
            if not 0 <= counted <= len(out):
                rebuild.append(row)
                prompt = s.token_ids[: s.num_prompt_tokens]
                prompt_rows += [row] * len(prompt)
                prompt_ids += prompt
                counted = 0
            new_ids = out[counted:]
            add_rows += [row] * len(new_ids)
            add_ids += new_ids
            self.slots[s.seq_id] = (s, row, len(out))
            rows.append(row)
        dev = self.device
        if rebuild:
            index = torch.tensor(rebuild, device=dev)
            counts[index] = 0
            in_prompt[index] = False
            in_prompt[
                torch.tensor(prompt_rows, device=dev), torch.tensor(prompt_ids, device=dev)
            ] = True
        if add_ids:
            counts.index_put_(
                (torch.tensor(add_rows, device=dev), torch.tensor(add_ids, device=dev)),
                torch.ones(len(add_ids), dtype=torch.int32, device=dev),
                accumulate=True,
            )
        index = torch.tensor(rows, device=dev)
        return counts[index], in_prompt[index]


def greedy_argmax(logits: torch.Tensor) -> torch.Tensor:  # [B, V] -> [B] int64
    """Each row's first maximal index, on the model-dtype logits (the same values, so the same
    token, with no fp32 copy). `max` returns the first maximal index like `argmax`, and is
    faster on bf16 (BENCHMARKS.md, "What each optimisation bought")."""
    return logits.max(dim=-1).indices


class Sampler:
    """Greedy rows take the argmax; sampled rows use the exponential race (argmax of p / E),
    which draws from p. Rows with a `seed` draw their noise from their own generator, so a
    seeded request's output does not depend on what else is in the batch."""

    def __init__(
        self,
        device: torch.device | str,
        seed: int,
        stop_token_ids: Iterable[int],
        argmax: Callable[[torch.Tensor], torch.Tensor] = greedy_argmax,
    ) -> None:
        """`argmax`: the greedy rows' [B, V] -> [B] int64 (the backend's, `Backend.argmax`)."""
        self.device = torch.device(device)
        self.argmax = argmax
        self.generator = torch.Generator(self.device).manual_seed(seed)
        self.stop_token_ids = torch.tensor(
            sorted(stop_token_ids), dtype=torch.long, device=self.device
        )
        self.token_counts = TokenCounts(self.device)

    def new_request_state(self, params: SamplingParams) -> torch.Generator | None:
        if params.seed is None or params.greedy:
            return None
        return torch.Generator(self.device).manual_seed(params.seed)

    @torch.inference_mode()
    def __call__(
        self,
        logits: torch.Tensor,  # [B, V]
        params: Seq[SamplingParams],
        generators: Seq[torch.Generator | None],
        num_outputs: Seq[int],  # tokens each row has generated so far (for min_tokens)
        histories: Seq[History] | None = None,  # each row's sequence (for the penalties)
    ) -> torch.Tensor:  # [B] int64
        for i, p in enumerate(params):
            if num_outputs[i] < p.min_tokens:  # no stop token (the model's or the request's) yet
                logits[i, self.stop_token_ids] = float("-inf")
                if p.stop_token_ids:
                    logits[i, list(p.stop_token_ids)] = float("-inf")
        dev = logits.device
        need_bias = any(p.logit_bias for p in params)
        need_penalties = any(p.uses_penalties for p in params)
        if need_bias or need_penalties:
            logits = logits.to(torch.float32, copy=True)  # the caller's logits stay as they were
        if need_bias:
            rows, ids, biases = [], [], []
            for i, p in enumerate(params):
                for tid, bias in (p.logit_bias or {}).items():
                    rows.append(i)
                    ids.append(tid)
                    biases.append(bias)
            logits.index_put_(
                (torch.tensor(rows, device=dev), torch.tensor(ids, device=dev)),
                torch.tensor(biases, device=dev),
                accumulate=True,
            )
        if need_penalties:
            if histories is None:
                raise ValueError("penalties need each row's sequence (histories)")
            pen = [i for i, p in enumerate(params) if p.uses_penalties]
            counts, in_prompt = self.token_counts.gather(
                [histories[i] for i in pen], logits.shape[-1]
            )

            def column(name: str) -> torch.Tensor:
                return torch.tensor([getattr(params[i], name) for i in pen], device=dev)

            index = torch.tensor(pen, device=dev)
            logits[index] = apply_penalties(
                logits[index],
                counts,
                in_prompt,
                column("repetition_penalty"),
                column("frequency_penalty"),
                column("presence_penalty"),
            )
        greedy = [p.greedy for p in params]
        greedy_ids = self.argmax(logits)  # model-dtype logits, or their biased fp32 copy
        if all(greedy):
            return greedy_ids
        logits = logits.float()
        temps = torch.tensor(
            [1.0 if g else p.temperature for g, p in zip(greedy, params, strict=True)], device=dev
        )
        logits = logits / temps.unsqueeze(1)
        need_k = any(p.top_k > 0 for p in params)
        need_p = any(p.top_p < 1.0 for p in params)
        if need_k or need_p:
            top_k = torch.tensor([p.top_k for p in params], device=dev) if need_k else None
            top_p = torch.tensor([p.top_p for p in params], device=dev) if need_p else None
            logits = apply_top_k_top_p(logits, top_k, top_p)
        if any(p.min_p > 0.0 for p in params):
            logits = apply_min_p(logits, torch.tensor([p.min_p for p in params], device=dev))
        probs = logits.softmax(dim=-1)
        noise = torch.empty_like(probs).exponential_(generator=self.generator)
        for i, gen in enumerate(generators):
            if gen is not None:
                noise[i].exponential_(generator=gen)
        sampled = (probs / noise).argmax(dim=-1)
        return torch.where(torch.tensor(greedy, device=dev), greedy_ids, sampled)
