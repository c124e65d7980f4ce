"""Attention over the paged KV cache, and its plain PyTorch implementation.

A step's tokens from all sequences are flattened into one token dimension. `AttentionMetadata`
describes where each sequence's queries sit in it and where its keys/values live in the cache.
Each layer's cache (`layers/kv_cache.py`) is head-major, `[num_blocks, KVH, block_size, D]`: one
KV head's rows of a block are contiguous, which is what the C++ decode kernel streams through.
An attention implementation writes the new K/V into the cache slots and attends each query to
its sequence's cached keys. Index tensors shared by every layer are built once per step by its
`prepare`, into a frozen metadata object of its own (`ReferenceStep` here).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import torch
import torch.nn.functional as F

from roseinfer.layers.kv_cache import KVCache, LayerCache

StepT = TypeVar("StepT")

# The decoder stack's run of one step: (input_ids [N], positions [N], the rotary tables cos and
# sin [max_positions, D/2] in the model's dtype) -> the final norm's output [N, hidden]; the
# step's K/V written into the cache. The stack looks up the tokens' embeddings and the
# positions' rows itself: two fewer PyTorch ops a step, each of which costs tens of µs when the
# weights' stream has just evicted it (BENCHMARKS.md, session 28).
StackStep = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class AttentionMetadata:
    """One step's batch layout: B sequences, N new tokens in all, decodes first.

    The first `num_decode_seqs` sequences have one new token each (tokens 0..num_decode_seqs-1);
    the rest are prefill chunks. Keeping them apart lets attention pad each group on its own.
    """

    query_start_loc: torch.Tensor  # [B + 1] int64, cumulative new-token counts
    context_lens: torch.Tensor  # [B] int64, cached + new tokens per sequence
    slot_mapping: torch.Tensor  # [N] int64, cache slot (block * block_size + offset) per token
    block_tables: torch.Tensor  # [B, max_blocks] int64, 0 padded (masked out)
    query_lens: list[int]  # [B] new tokens per sequence (host copy)
    context_lens_host: list[int]  # [B] host copy of context_lens
    num_decode_seqs: int
    block_size: int

    @property
    def num_seqs(self) -> int:
        return len(self.query_lens)

    @property
    def num_tokens(self) -> int:  # N
        return sum(self.query_lens)


@dataclass(frozen=True)
class AttentionGroup:
    """Sequences attended together: a slice of the tokens, padded to the group's longest."""

    tokens: slice  # their rows in the flattened [N] token dimension
    num_seqs: int
    max_query_len: int
    block_ids: torch.Tensor  # [num_seqs * max_blocks] blocks to gather, row-major
    mask: torch.Tensor  # [num_seqs, 1, max_query_len, max_blocks * block_size] bool
    query_rows: torch.Tensor | None  # [tokens] row of each token in the padded queries
    # One sequence with nothing cached before this chunk (a fresh prompt): its keys are exactly
    # the chunk's own, so attention is plain causal SDPA, without gathering from the cache.
    fresh: bool = False


@dataclass(frozen=True)
class ReferenceStep:
    """`ReferenceAttention`'s per-step metadata, shared by every layer."""

    groups: tuple[
        AttentionGroup, ...
    ]  # the decodes, then the prefill chunks (either may be absent)
    write: tuple[torch.Tensor, torch.Tensor]  # (block [N], offset [N]) of each new token's slot


class ReferenceAttention:
    """Plain PyTorch paged attention (CPU and CUDA): gather K/V by block table, then SDPA.

    Each group's key blocks are gathered into a padded [B, max_blocks * block_size] batch with one
    index built per step, so no per-sequence Python work happens inside the layers. Decodes and
    prefill chunks are separate groups: a 256-token chunk does not pad 31 decodes to 256 queries.
    """

    def prepare(self, meta: AttentionMetadata) -> ReferenceStep:
        nd, num_tokens = meta.num_decode_seqs, meta.num_tokens
        groups = []
        if nd:
            groups.append(attention_group(meta, 0, nd, slice(0, nd)))
        if nd < meta.num_seqs:
            groups.append(attention_group(meta, nd, meta.num_seqs, slice(nd, num_tokens)))
        return ReferenceStep(tuple(groups), cache_positions(meta.slot_mapping, meta.block_size))

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,  # [N, KVH, D]
        cache: LayerCache,
        step: ReferenceStep,
        scale: float,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:  # [N, H, D], or [len(rows), H, D] (PagedAttention)
        blocks, offsets = step.write
        cache.write(blocks, offsets, k, v)
        groups = step.groups
        if len(groups) == 1:
            out = attend_group(q, k, v, cache, groups[0], scale)
        else:
            out = torch.empty_like(q)
            for g in groups:
                t = g.tokens
                out[t] = attend_group(q[t], k[t], v[t], cache, g, scale)
        return out if rows is None else out[rows]  # every row attended: the plain path


def attention_group(
    meta: AttentionMetadata, first: int, last: int, tokens: slice
) -> AttentionGroup:
    """Sequences first..last-1 of the step, whose new tokens are `tokens`, as one padded group."""
    device = meta.context_lens.device
    bsz = last - first
    max_q = max(meta.query_lens[first:last])
    max_blocks = -(-max(meta.context_lens_host[first:last]) // meta.block_size)
    tables = meta.block_tables[first:last, :max_blocks]  # [b, mb]
    ctx_lens = meta.context_lens[first:last]  # [b]
    q_start = meta.query_start_loc[first : last + 1] - tokens.start  # [b + 1]
    q_lens = q_start[1:] - q_start[:-1]  # [b]
    pos = torch.arange(max_blocks * meta.block_size, device=device)  # [L]
    valid_key = pos[None, :] < ctx_lens[:, None]  # [b, L]
    q_idx = torch.arange(max_q, device=device)  # [Qmax]
    # Absolute position of each (padded) query row; padded rows see all keys (no NaN rows).
    q_pos = (ctx_lens - q_lens)[:, None] + q_idx[None, :]  # [b, Qmax]
    q_pos = torch.where(q_idx[None, :] < q_lens[:, None], q_pos, ctx_lens[:, None] - 1)
    mask = (pos[None, None, :] <= q_pos[:, :, None]) & valid_key[:, None, :]  # [b, Qmax, L]
    query_rows = None
    if max_q > 1:
        seq_of_token = torch.repeat_interleave(torch.arange(bsz, device=device), q_lens)
        offset = torch.arange(seq_of_token.numel(), device=device) - q_start[seq_of_token]
        query_rows = seq_of_token * max_q + offset
    fresh = bsz == 1 and meta.context_lens_host[first] == meta.query_lens[first]
    return AttentionGroup(tokens, bsz, max_q, tables.reshape(-1), mask[:, None], query_rows, fresh)


def attend_group(
    q: torch.Tensor,  # [n, H, D] the group's tokens
    k: torch.Tensor,  # [n, KVH, D] their new keys and values (already in the cache too)
    v: torch.Tensor,
    cache: LayerCache,
    g: AttentionGroup,
    scale: float,
) -> torch.Tensor:  # [n, H, D]
    # A fresh prompt attends to its own K/V as computed (an int8 cache holds them rounded).
    if g.fresh:
        out = F.scaled_dot_product_attention(
            q.transpose(0, 1)[None],  # [1, H, n, D]
            k.transpose(0, 1)[None],  # [1, KVH, n, D]
            v.transpose(0, 1)[None],
            is_causal=True,
            scale=scale,
            enable_gqa=k.shape[1] != q.shape[1],
        )
        return out[0].transpose(0, 1)
    num_heads, head_dim = q.shape[1], q.shape[2]
    keys, values = cache.gather(g.block_ids, g.num_seqs, q.dtype)  # [b, KVH, L, D] each
    if g.query_rows is None:
        q_pad = q.view(g.num_seqs, 1, num_heads, head_dim)
    else:
        q_pad = q.new_zeros(g.num_seqs * g.max_query_len, num_heads, head_dim)
        q_pad[g.query_rows] = q
        q_pad = q_pad.view(g.num_seqs, g.max_query_len, num_heads, head_dim)
    out = F.scaled_dot_product_attention(
        q_pad.transpose(1, 2),  # [b, H, Qmax, D]
        keys,
        values,
        attn_mask=g.mask,
        scale=scale,
        enable_gqa=keys.shape[1] != num_heads,
    ).transpose(1, 2)  # [b, Qmax, H, D]
    if g.query_rows is None:
        return out.reshape(g.num_seqs, num_heads, head_dim)
    return out.reshape(-1, num_heads, head_dim)[g.query_rows]


def cache_positions(slots: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(block, offset in block) of each slot [N]: a head-major cache is written as
    `cache[blocks, :, offsets] = x` with x [N, KVH, D]."""
    return slots // block_size, slots % block_size


class PagedAttention(Protocol[StepT]):
    """Attention over the paged KV cache: what a backend gives the layers (`Backend.attention`)."""

    def prepare(self, meta: AttentionMetadata) -> StepT:
        """The step's index tensors, built once and shared by every layer."""
        ...

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D], written into the cache
        v: torch.Tensor,  # [N, KVH, D]
        cache: LayerCache,
        step: StepT,
        scale: float,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """[N, H, D], every row's K/V written; with `rows` (int64, ascending; of each sequence,
        none or a run of its last new tokens: `ModelRunner`'s read rows) those rows' outputs
        alone, [len(rows), H, D]."""
        ...


@dataclass
class ForwardContext(Generic[StepT]):
    """What every attention layer needs in one forward: the step's attention metadata, the
    attention implementation and the cache; and the fused decoder stack, for steps that take it."""

    step: StepT  # the attention's per-step metadata (its `prepare`)
    attention: PagedAttention[StepT]
    kv_cache: KVCache
    # The whole layer stack as one call for this step (the backend's, where it has one and the
    # step fits).
    decoder_stack: StackStep | None = None

    def attend(
        self,
        layer: int,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        scale: float,
        rows: torch.Tensor | None = None,  # the rows whose output is read (PagedAttention)
    ) -> torch.Tensor:
        cache = self.kv_cache.layers[layer]
        return self.attention.forward(q, k, v, cache, self.step, scale, rows)
