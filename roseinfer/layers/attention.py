"""Attention over the paged KV cache.

A step's tokens from all sequences are flattened into one token dimension. `AttentionMetadata`
describes where each sequence's queries sit in it and where its keys/values live in the cache.
The backend writes the new K/V into the cache slots and attends each query to its sequence's
cached keys. Index tensors shared by every layer are built once per step in `prepare`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F


@dataclass
class AttentionMetadata:
    """One step's batch layout. B sequences, N new tokens in all."""

    query_start_loc: torch.Tensor  # [B + 1] int64, cumulative new-token counts
    context_lens: torch.Tensor  # [B] int64, cached + new tokens per sequence
    slot_mapping: (
        torch.Tensor
    )  # [N] int64, cache slot (block * block_size + offset) of each new token
    block_tables: torch.Tensor  # [B, max_blocks] int64, -1 padded
    query_lens: list[int]  # [B] new tokens per sequence (host copy)
    max_query_len: int
    max_context_len: int
    block_size: int
    # Filled by the backend's `prepare`, reused by every layer.
    prepared: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def num_seqs(self) -> int:
        return len(self.query_lens)

    @property
    def is_decode_only(self) -> bool:
        return self.max_query_len == 1


class ReferenceAttention:
    """Plain PyTorch paged attention (CPU and CUDA): gather K/V by block table, then SDPA.

    Gathers every sequence's key blocks into a padded [B, max_blocks * block_size] batch with one index
    built per step, so no per-sequence Python work happens inside the layers.
    """

    name = "reference"

    def prepare(self, meta: AttentionMetadata) -> None:
        device = meta.context_lens.device
        bsz, max_q = meta.num_seqs, meta.max_query_len
        # Keys are gathered block by block: L = max_blocks * block_size >= max_context_len.
        max_ctx = meta.block_tables.shape[1] * meta.block_size
        pos = torch.arange(max_ctx, device=device)  # [L]
        valid_key = pos[None, :] < meta.context_lens[:, None]  # [B, L]
        q_lens = meta.query_start_loc[1:] - meta.query_start_loc[:-1]  # [B]
        q_idx = torch.arange(max_q, device=device)  # [Qmax]
        # Absolute position of each (padded) query row; padded rows see all keys (avoids NaN rows).
        q_pos = (meta.context_lens - q_lens)[:, None] + q_idx[None, :]  # [B, Qmax]
        q_pos = torch.where(q_idx[None, :] < q_lens[:, None], q_pos, meta.context_lens[:, None] - 1)
        mask = (pos[None, None, :] <= q_pos[:, :, None]) & valid_key[:, None, :]  # [B, Qmax, L]
        meta.prepared["mask"] = mask[:, None, :, :]  # [B, 1, Qmax, L]
        meta.prepared["block_ids"] = meta.block_tables.reshape(-1)  # [B * max_blocks]
        if max_q > 1:
            # Row of each flattened token in the padded [B * Qmax] query layout.
            seq_of_token = torch.repeat_interleave(torch.arange(bsz, device=device), q_lens)
            offset_in_seq = (
                torch.arange(seq_of_token.numel(), device=device)
                - meta.query_start_loc[seq_of_token]
            )
            meta.prepared["query_rows"] = seq_of_token * max_q + offset_in_seq  # [N]

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,  # [N, KVH, D]
        k_cache: torch.Tensor,  # [num_slots, KVH, D]
        v_cache: torch.Tensor,  # [num_slots, KVH, D]
        meta: AttentionMetadata,
        scale: float,
    ) -> torch.Tensor:  # [N, H, D]
        k_cache[meta.slot_mapping] = k
        v_cache[meta.slot_mapping] = v
        bsz, max_q = meta.num_seqs, meta.max_query_len
        num_heads, head_dim = q.shape[1], q.shape[2]
        keys = self._gather(k_cache, meta)  # [B, KVH, L, D]
        values = self._gather(v_cache, meta)
        if max_q == 1:
            q_pad = q.view(bsz, 1, num_heads, head_dim)
        else:
            rows = meta.prepared["query_rows"]
            q_pad = q.new_zeros(bsz * max_q, num_heads, head_dim)
            q_pad[rows] = q
            q_pad = q_pad.view(bsz, max_q, num_heads, head_dim)
        out = F.scaled_dot_product_attention(
            q_pad.transpose(1, 2),  # [B, H, Qmax, D]
            keys,
            values,
            attn_mask=meta.prepared["mask"],
            scale=scale,
            enable_gqa=keys.shape[1] != num_heads,
        ).transpose(1, 2)  # [B, Qmax, H, D]
        if max_q == 1:
            return out.reshape(bsz, num_heads, head_dim)
        return out.reshape(bsz * max_q, num_heads, head_dim)[rows]

    @staticmethod
    def _gather(cache: torch.Tensor, meta: AttentionMetadata) -> torch.Tensor:
        """Each sequence's blocks, contiguous: [B, KVH, max_blocks * block_size, D]."""
        num_slots, kv_heads, head_dim = cache.shape
        blocks = cache.view(num_slots // meta.block_size, meta.block_size * kv_heads * head_dim)
        out = blocks.index_select(0, meta.prepared["block_ids"])  # [B * max_blocks, bs * KVH * D]
        return out.view(meta.num_seqs, -1, kv_heads, head_dim).transpose(1, 2)


def get_attention_backend(name: str) -> ReferenceAttention:
    if name in ("auto", "reference"):
        return ReferenceAttention()
    raise ValueError(f"unknown attention backend {name!r}")


@dataclass
class ForwardContext:
    """What every attention layer needs in one forward: the batch layout and the cache."""

    meta: AttentionMetadata
    backend: ReferenceAttention
    k_caches: list[torch.Tensor]  # per layer [num_slots, KVH, D]
    v_caches: list[torch.Tensor]

    def attend(
        self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float
    ) -> torch.Tensor:
        return self.backend.forward(
            q, k, v, self.k_caches[layer], self.v_caches[layer], self.meta, scale
        )
