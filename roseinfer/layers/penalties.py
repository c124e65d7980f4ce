"""The penalties' state and formula: per-sequence token counts kept on the sampler's device.

`TokenCounts` keeps one dense row per sequence that uses a penalty, updated incrementally from
the sequence's own token ids; `apply_penalties` is vLLM's formula over a batch of rows.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from typing import Protocol

import torch


def apply_penalties(
    logits: torch.Tensor,  # [B, V] float
    counts: torch.Tensor,  # [R, V] int: each token's count among the generated tokens
    in_prompt: torch.Tensor,  # [R, V] bool: the token is in the prompt
    repetition: torch.Tensor,  # [R]
    frequency: torch.Tensor,  # [R]
    presence: torch.Tensor,  # [R]
    index: torch.Tensor | None = None,  # [R]: the logits row of each; None: R = B, in order
) -> torch.Tensor:
    """vLLM's penalties, in place. Repetition (CTRL, transformers'
    RepetitionPenaltyLogitsProcessor): a token seen in the prompt or the output has its logit
    divided by p if positive, multiplied by p if not. Then OpenAI's: logit - frequency * count
    - presence * [count > 0], over the generated tokens only.

    Only the tokens a row has seen change, so only they are touched: one pass finds them, the
    arithmetic runs on those few (a dense formula costs several passes over [B, V])."""
    seen = counts > 0
    rows, cols = (seen | in_prompt).nonzero(as_tuple=True)
    batch_rows = rows if index is None else index[rows]
    values = logits[batch_rows, cols]
    count = counts[rows, cols].to(logits.dtype)
    p = repetition[rows]
    values = torch.where(values > 0, values / p, values * p)
    values = values - frequency[rows] * count - presence[rows] * (count > 0)
    logits[batch_rows, cols] = values
    return logits


class History(Protocol):
    """What the sampler reads of a sequence for the penalties and bad words
    (engine.sequence.Sequence is one)."""

    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int
    bad_words_token_ids: tuple[tuple[int, ...], ...]  # each banned word's token ids

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
