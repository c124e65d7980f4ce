"""Attention over the paged KV cache.

A step's tokens from all sequences are flattened into one token dimension. `AttentionMetadata`
describes where each sequence's queries sit in it and where its keys/values live in the cache.
Each layer's cache (`layers/kv_cache.py`) is head-major, `[num_blocks, KVH, block_size, D]`: one
KV head's rows of a block are contiguous, which is what the decode kernel streams through.
The backend writes the new K/V into the cache slots and attends each query to its sequence's
cached keys. Index tensors shared by every layer are built once per step in `prepare`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import torch
import torch.nn.functional as F

from roseinfer.config import ATTENTION_BACKENDS
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import KVCache, LayerCache


@dataclass
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
    # Filled by the backend's `prepare`, reused by every layer.
    prepared: dict = field(default_factory=dict)

    @property
    def num_seqs(self) -> int:
        return len(self.query_lens)


@dataclass
class _Group:
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


class ReferenceAttention:
    """Plain PyTorch paged attention (CPU and CUDA): gather K/V by block table, then SDPA.

    Each group's key blocks are gathered into a padded [B, max_blocks * block_size] batch with one
    index built per step, so no per-sequence Python work happens inside the layers. Decodes and
    prefill chunks are separate groups: a 256-token chunk does not pad 31 decodes to 256 queries.
    """

    name = "reference"

    def prepare(self, meta: AttentionMetadata) -> None:
        nd, num_tokens = meta.num_decode_seqs, int(meta.query_start_loc[-1])
        groups = []
        if nd:
            groups.append(self._group(meta, 0, nd, slice(0, nd)))
        if nd < meta.num_seqs:
            groups.append(self._group(meta, nd, meta.num_seqs, slice(nd, num_tokens)))
        meta.prepared["groups"] = groups
        meta.prepared["write"] = _cache_positions(meta.slot_mapping, meta.block_size)

    def decode_indices(
        self, meta: AttentionMetadata
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(slot_mapping, block_tables, context_lens) of the C++ decode kernel when the whole
        step attends through it (one row per query token); None here: this backend has none."""
        return None

    @staticmethod
    def _group(meta: AttentionMetadata, first: int, last: int, tokens: slice) -> _Group:
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
        return _Group(tokens, bsz, max_q, tables.reshape(-1), mask[:, None], query_rows, fresh)

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,  # [N, KVH, D]
        cache: LayerCache,
        meta: AttentionMetadata,
        scale: float,
    ) -> torch.Tensor:  # [N, H, D]
        blocks, offsets = meta.prepared["write"]
        cache.write(blocks, offsets, k, v)
        groups = meta.prepared["groups"]
        if len(groups) == 1:
            return self._attend(q, k, v, cache, groups[0], scale)
        out = torch.empty_like(q)
        for g in groups:
            t = g.tokens
            out[t] = self._attend(q[t], k[t], v[t], cache, g, scale)
        return out

    @staticmethod
    def _attend(
        q: torch.Tensor,  # [n, H, D] the group's tokens
        k: torch.Tensor,  # [n, KVH, D] their new keys and values (already in the cache too)
        v: torch.Tensor,
        cache: LayerCache,
        g: _Group,
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


# Steps with prefill chunks run every token through the decode kernel, as a query of its own
# that sees its sequence's keys up to its position, while the step attends to few keys in all:
# SDPA's set-up, padding and gathers then cost more than the kernel's work per key, and a step
# within the decoder stack's row limit runs as one C++ call. Prefill steps, SDPA vs token by
# token (2026-11-22, SmolLM2, bf16 on AMX; not measured on other CPUs or in fp32): 7 prompts of
# 70 tokens (17k keys) 131 -> 110 ms, 16 of 32 (8k) 133 -> 115 ms, 3 of 170 (44k) 137 -> 130 ms,
# 2 of 256 (66k) even, 1 of 512 (131k) 148 vs 212 ms: hence the bound on keys, which also keeps
# chunks deep into a long context on SDPA (it reads each key once per chunk).
PER_TOKEN_MAX_KEYS = 49152  # keys attended in all, summed over the step's tokens


def _small_step(meta: AttentionMetadata) -> bool:
    """Whether a step with prefill chunks attends to few enough keys to run token by token."""
    # A chunk of q tokens after c cached ones attends to (c + 1) + ... + (c + q) keys.
    keys = sum(
        q * (n - q) + q * (q + 1) // 2
        for q, n in zip(meta.query_lens, meta.context_lens_host, strict=True)
    )
    return keys <= PER_TOKEN_MAX_KEYS


def _per_token_indices(
    meta: AttentionMetadata, num_tokens: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The decode kernel's (slot_mapping, block_tables, context_lens) with one row per token: its
    sequence's block table, and its own position + 1 as the context (causal by construction)."""
    device = meta.context_lens.device
    q_lens = meta.query_start_loc[1:] - meta.query_start_loc[:-1]  # [B]
    seq = torch.repeat_interleave(torch.arange(meta.num_seqs, device=device), q_lens)  # [N]
    offset = torch.arange(num_tokens, device=device) - meta.query_start_loc[seq]  # [N]
    lens = meta.context_lens[seq] - q_lens[seq] + offset + 1  # [N]
    return meta.slot_mapping, meta.block_tables[seq], lens


def _cache_positions(slots: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(block, offset in block) of each slot: a head-major cache is written as
    `cache[blocks, :, offsets] = x` with x [N, KVH, D]."""
    return slots // block_size, slots % block_size


class CpuPagedAttention(ReferenceAttention):
    """Decodes through the C++ kernel (`roseinfer/kernels/paged_attention.cpp`), which reads each
    sequence's keys and values in place from the paged cache: no gathered copy, no mask, one call
    per layer. Prefill chunks keep the reference path, whose SDPA is faster for many keys,
    except in steps with few (`PER_TOKEN_MAX_KEYS`), where every token is a query of the kernel."""

    name = "cpu"

    def __init__(self, kernels: ModuleType) -> None:
        self.kernels = kernels

    def prepare(self, meta: AttentionMetadata) -> None:
        nd, num_tokens = meta.num_decode_seqs, int(meta.query_start_loc[-1])
        if nd < meta.num_seqs and _small_step(meta):
            meta.prepared["groups"] = []
            meta.prepared["decode"] = _per_token_indices(meta, num_tokens)
            meta.prepared["per_token"] = True
            return
        groups = []
        if nd < meta.num_seqs:
            groups.append(self._group(meta, nd, meta.num_seqs, slice(nd, num_tokens)))
            meta.prepared["write"] = _cache_positions(meta.slot_mapping[nd:], meta.block_size)
        meta.prepared["groups"] = groups
        # The decoding sequences' rows of the index tensors, sliced once for every layer.
        meta.prepared["decode"] = (
            meta.slot_mapping[:nd],
            meta.block_tables[:nd],
            meta.context_lens[:nd],
        )

    def decode_indices(
        self, meta: AttentionMetadata
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        if meta.num_decode_seqs != meta.num_seqs and "per_token" not in meta.prepared:
            return None
        return meta.prepared["decode"]

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,  # [N, KVH, D]
        cache: LayerCache,
        meta: AttentionMetadata,
        scale: float,
    ) -> torch.Tensor:  # [N, H, D]
        nd = meta.num_decode_seqs
        if nd == meta.num_seqs or "per_token" in meta.prepared:
            return self._decode(q, k, v, cache, meta, scale)
        (g,) = meta.prepared["groups"]
        blocks, offsets = meta.prepared["write"]
        t = g.tokens
        cache.write(blocks, offsets, k[t], v[t])
        prefill = self._attend(q[t], k[t], v[t], cache, g, scale)
        if not nd:  # prefill chunks only: no copy into a combined output
            return prefill
        out = torch.empty_like(q)
        out[:nd] = self._decode(q[:nd], k[:nd], v[:nd], cache, meta, scale)
        out[t] = prefill
        return out

    def _decode(
        self,
        q: torch.Tensor,  # [nd, H, D], one token per decoding sequence
        k: torch.Tensor,
        v: torch.Tensor,
        cache: LayerCache,
        meta: AttentionMetadata,
        scale: float,
    ) -> torch.Tensor:  # [nd, H, D]
        slots, tables, context_lens = meta.prepared["decode"]
        return self.kernels.paged_decode_attention(
            q,
            k,
            v,
            cache.k,
            cache.v,
            slots,
            tables,
            context_lens,
            scale,
            k_scale=cache.k_scale,
            v_scale=cache.v_scale,
        )


def get_attention_backend(name: str, device: torch.device) -> ReferenceAttention:
    """`auto`: the C++ kernel on CPU where it builds, else the reference path."""
    if name not in ATTENTION_BACKENDS:
        raise ValueError(f"unknown attention backend {name!r}")
    if name == "reference" or (name == "auto" and device.type != "cpu"):
        return ReferenceAttention()
    if device.type != "cpu":
        raise ValueError("--attention-backend cpu runs on CPU only")
    kernels = load_cpu_kernels()
    if kernels is not None:
        return CpuPagedAttention(kernels)
    if name == "cpu":
        raise RuntimeError("--attention-backend cpu: the C++ kernel could not be built (see log)")
    return ReferenceAttention()


@dataclass
class ForwardContext:
    """What every attention layer needs in one forward: the batch layout and the cache."""

    meta: AttentionMetadata
    backend: ReferenceAttention
    kv_cache: KVCache

    def attend(
        self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float
    ) -> torch.Tensor:
        return self.backend.forward(q, k, v, self.kv_cache.layers[layer], self.meta, scale)

    def decode_indices(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """The C++ decode kernel's index tensors when the whole step attends through it: a
        decode step, or a small step with prefill chunks, token by token."""
        return self.backend.decode_indices(self.meta)
