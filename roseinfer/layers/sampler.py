"""Batched sampling: one call for the whole batch, each row with its own SamplingParams."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Sequence as Seq

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

    def new_request_state(self, params: SamplingParams) -> torch.Generator | None:
        if params.seed is None or params.greedy:
            return None
        return torch.Generator(self.device).manual_seed(params.seed)

    def __call__(
        self,
        logits: torch.Tensor,  # [B, V]
        params: Seq[SamplingParams],
        generators: Seq[torch.Generator | None],
        num_outputs: Seq[int],  # tokens each row has generated so far (for min_tokens)
    ) -> torch.Tensor:  # [B] int64
        for i, p in enumerate(params):
            if num_outputs[i] < p.min_tokens:  # no stop token (the model's or the request's) yet
                logits[i, self.stop_token_ids] = float("-inf")
                if p.stop_token_ids:
                    logits[i, list(p.stop_token_ids)] = float("-inf")
        greedy = [p.greedy for p in params]
        greedy_ids = self.argmax(logits)
        if all(greedy):
            return greedy_ids
        logits = logits.float()
        temps = torch.tensor(
            [1.0 if g else p.temperature for g, p in zip(greedy, params, strict=True)],
            device=logits.device,
        )
        logits = logits / temps.unsqueeze(1)
        need_k = any(p.top_k > 0 for p in params)
        need_p = any(p.top_p < 1.0 for p in params)
        if need_k or need_p:
            top_k = (
                torch.tensor([p.top_k for p in params], device=logits.device) if need_k else None
            )
            top_p = (
                torch.tensor([p.top_p for p in params], device=logits.device) if need_p else None
            )
            logits = apply_top_k_top_p(logits, top_k, top_p)
        probs = logits.softmax(dim=-1)
        noise = torch.empty_like(probs).exponential_(generator=self.generator)
        for i, gen in enumerate(generators):
            if gen is not None:
                noise[i].exponential_(generator=gen)
        sampled = (probs / noise).argmax(dim=-1)
        return torch.where(torch.tensor(greedy, device=logits.device), greedy_ids, sampled)
