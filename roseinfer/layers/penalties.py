"""The penalties' state and formula: per-sequence token counts kept on the sampler's device.

`TokenCounts` keeps one dense row per sequence that uses a penalty, updated incrementally from
the sequence's own token ids (vLLM's: the output counted; llama.cpp's: a window of the prompt
and output), and the tokens each has seen; `apply_penalties` is vLLM's formula, applied to those
tokens of a batch.
"""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch


@dataclass(frozen=True, slots=True)
class SeenTokens:
    """The (batch row, token) pairs the penalties touch: each token a row's sequence has in its
    prompt or output (llama.cpp's: in its window), with its count among the generated tokens
    (llama.cpp's: in the window). [N] each."""

    rows: torch.Tensor  # int64 batch rows
    cols: torch.Tensor  # int64 token ids
    counts: torch.Tensor  # int32: occurrences among the generated tokens (0: prompt only)


def apply_penalties(
    logits: torch.Tensor,  # [B, V] float
    seen: SeenTokens,
    repetition: torch.Tensor,  # [B]
    frequency: torch.Tensor,  # [B]
    presence: torch.Tensor,  # [B]
) -> torch.Tensor:
    """vLLM's penalties, in place. Repetition (CTRL, transformers'
    RepetitionPenaltyLogitsProcessor): a token seen in the prompt or the output has its logit
    divided by p if positive, multiplied by p if not. Then OpenAI's: logit - frequency * count
    - presence * [count > 0], over the generated tokens only (llama.cpp's formula too, the
    counts then of its window: `TokenCounts`).

    Only the tokens a row has seen change, so only they are touched (a dense formula costs
    several passes over [B, V] a step)."""
    rows = seen.rows
    flat = logits.view(-1)  # one index per pair: cheaper than [rows, cols] indexing
    where = rows * logits.shape[1] + seen.cols
    values = flat.index_select(0, where)
    count = seen.counts.to(logits.dtype)
    p = repetition[rows]
    values = torch.where(values > 0, values / p, values * p)
    values = values - frequency[rows] * count - presence[rows] * (count > 0)
    flat.index_copy_(0, where, values)
    return logits


class History(Protocol):
    """What the sampler reads of a sequence for the penalties, bad words and grammar
    (engine.sequence.Sequence is one)."""

    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int
    bad_words_token_ids: tuple[tuple[int, ...], ...]  # each banned word's token ids
    matcher: Any  # the grammar state of a structured-output request, or None

    @property
    def is_finished(self) -> bool: ...


@dataclass(eq=False, slots=True)
class _Slot:
    seq: History
    row: int  # of `TokenCounts.counts`
    window: int | None  # SamplingParams.penalty_last_n
    lo: int = 0  # the row counts token_ids[lo:hi]
    hi: int = -1  # (-1: rebuild)
    seen: list[int] = field(default_factory=list)  # the tokens the penalties touch, each once
    seen_set: set[int] = field(default_factory=set)  # (vLLM's: prompt and output)
    in_window: dict[int, int] = field(default_factory=dict)  # (llama.cpp's: counts > 0)


class TokenCounts:
    """Per-sequence token counts for the penalties, kept on the sampler's device and updated
    incrementally: one dense row per sequence that uses penalties (`counts` [S, V] int32), never
    one per batch row of plain requests; and, on the host, the tokens each row's penalties touch.

    vLLM's penalties (`window` None) count a sequence's generated tokens and touch its prompt's
    too (the repetition penalty reads both); llama.cpp's (`window` n, its `repeat_last_n`) count
    and touch the last n tokens of the prompt and output (-1: all of them), a token leaving the
    window taken off its count as the sequence grows.

    A row is derived from the sequence's own token ids: it records which of them it counts
    (`lo:hi`), adds the new ones each step and takes off those that left the window (one
    batched `index_put_` for the batch), and is rebuilt from scratch where the ids no longer
    run on from what it counted (a sequence preempted and recomputed, or anything else that
    rewrote its tokens). Rows of finished sequences are reused."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.counts: torch.Tensor | None = None
        self.slots: dict[int, _Slot] = {}  # by seq_id

    def _reserve(self, n: int, vocab: int) -> torch.Tensor:
        """At least `n` rows of `vocab` columns, the used ones kept (doubling as it grows)."""
        counts = self.counts
        if counts is None or counts.shape[1] != vocab:
            counts = None
            self.slots.clear()
        if counts is None or counts.shape[0] < n:
            size = max(n, 8, 0 if counts is None else 2 * counts.shape[0])
            grown = torch.zeros(size, vocab, dtype=torch.int32, device=self.device)
            if counts is not None:
                grown[: counts.shape[0]] = counts
            counts = grown
        self.counts = counts
        return counts

    @torch.inference_mode()  # its rows are inference tensors, whoever calls first
    def gather(
        self, seqs: Seq[History], batch_rows: Seq[int], vocab: int,
        windows: Seq[int | None] | None = None,
    ) -> SeenTokens:  # fmt: skip
        """The seen tokens of `seqs` (at `batch_rows` of the batch), brought up to date;
        `windows`: each one's `penalty_last_n` (None: all vLLM's)."""
        for sid in [k for k, slot in self.slots.items() if slot.seq.is_finished]:
            del self.slots[sid]
        windows = [None] * len(seqs) if windows is None else windows
        for s, window in zip(seqs, windows, strict=True):  # a row counted otherwise is stale
            slot = self.slots.get(s.seq_id)
            if slot is not None and (slot.seq is not s or slot.window != window):
                del self.slots[s.seq_id]
        new = [s for s in seqs if s.seq_id not in self.slots]
        counts = self._reserve(len(self.slots) + len(new), vocab)
        used = {slot.row for slot in self.slots.values()}
        free = (r for r in range(counts.shape[0]) if r not in used)
        for s, window in zip(seqs, windows, strict=True):  # all of them if it reset
            if s.seq_id not in self.slots:
                self.slots[s.seq_id] = _Slot(s, next(free), window)
        rebuild: list[int] = []
        add_rows: list[int] = []
        add_ids: list[int] = []
        add_values: list[int] = []
        rows: list[int] = []
        slot_rows: list[int] = []
        cols: list[int] = []
        for s, batch_row in zip(seqs, batch_rows, strict=True):
            slot = self.slots[s.seq_id]
            ids, end = s.token_ids, len(s.token_ids)
            if slot.window is None:
                start = s.num_prompt_tokens
            else:
                start = 0 if slot.window < 0 else max(0, end - slot.window)
            if not (0 <= slot.lo <= start and slot.lo <= slot.hi <= end):
                rebuild.append(slot.row)
                slot.lo = slot.hi = start
                slot.in_window.clear()
                slot.seen_set = set(ids[:start]) if slot.window is None else set()
                slot.seen = list(slot.seen_set)
            # counted lo:hi, to count start:end (lo <= start, hi <= end)
            gone, came = ids[slot.lo : min(start, slot.hi)], ids[max(start, slot.hi) : end]
            add_rows += [slot.row] * (len(came) + len(gone))
            add_ids += came + gone
            add_values += [1] * len(came) + [-1] * len(gone)
            if slot.window is None:
                for t in came:
                    if t not in slot.seen_set:
                        slot.seen_set.add(t)
                        slot.seen.append(t)
            else:
                tally = slot.in_window
                for t in came:
                    tally[t] = tally.get(t, 0) + 1
                for t in gone:
                    tally[t] -= 1
                    if not tally[t]:
                        del tally[t]
                slot.seen = list(tally)
            slot.lo, slot.hi = start, end
            rows += [batch_row] * len(slot.seen)
            slot_rows += [slot.row] * len(slot.seen)
            cols += slot.seen
        dev = self.device
        if rebuild:
            counts[torch.tensor(rebuild, device=dev)] = 0
        if add_ids:
            counts.index_put_(
                (torch.tensor(add_rows, device=dev), torch.tensor(add_ids, device=dev)),
                torch.tensor(add_values, dtype=torch.int32, device=dev),
                accumulate=True,
            )
        col_index = torch.tensor(cols, dtype=torch.long, device=dev)
        return SeenTokens(
            torch.tensor(rows, dtype=torch.long, device=dev),
            col_index,
            counts[torch.tensor(slot_rows, dtype=torch.long, device=dev), col_index],
        )
