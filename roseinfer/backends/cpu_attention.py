"""The `cpu` backend's paged attention: the C++ decode kernel
(`roseinfer/kernels/paged_attention.cpp`, its kernels per instruction set in `attention_*.h`),
which reads each sequence's keys and values in place from the paged cache: no gathered copy, no
mask, one call per layer. Prefill chunks go through the C++ prefill kernel
(`prefill_attention.cpp`, its tiles for AMX, AVX512-BF16 and plain vectors), which reads the
blocks in place too, so a chunk after cached tokens (a prefix-cache hit, a long prompt's later
chunks) pays for its own queries only; steps with few keys in all (`PER_TOKEN_MAX_KEYS`) run
every token as a query of the decode kernel. The reference backend
(`--attention-backend reference`) keeps SDPA over gathered blocks for every step as the plain
path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import torch

from roseinfer.layers.attention import AttentionMetadata
from roseinfer.layers.kv_cache import LayerCache

if TYPE_CHECKING:
    from roseinfer.kernels._ext import CppKernels

# Steps with prefill chunks run every token through the decode kernel, as a query of its own
# that sees its sequence's keys up to its position, while the step attends to few keys in all:
# then a step within the decoder stack's row limit runs as one C++ call. Past this many keys the
# prefill kernel takes the chunks: it reads each key once per tile of 32 queries, the decode
# kernel once per query. Set against SDPA (BENCHMARKS.md, "one C++ call per decode step"), the
# limit still marks where the prefill kernel overtakes in fp32 (45-51k keys; session 16).
PER_TOKEN_MAX_KEYS = 49152  # keys attended in all, summed over the step's tokens


@dataclass(frozen=True)
class DecodeIndices:
    """The decode kernel's index tensors, one row per query token (n of them)."""

    slot_mapping: torch.Tensor  # [n] cache slot of each query's new K/V
    block_tables: torch.Tensor  # [n, max_blocks] its sequence's blocks
    context_lens: torch.Tensor  # [n] keys it attends to (its own position + 1 at most)


class KernelPrefill(NamedTuple):
    """A step's prefill chunks, attended by the C++ prefill kernel."""

    tokens: slice  # their rows of the step's N tokens
    block_tables: torch.Tensor  # [S, max_blocks] of the prefilling sequences
    query_start_loc: torch.Tensor  # [S + 1] from 0, within `tokens`
    context_lens: torch.Tensor  # [S]
    slot_mapping: torch.Tensor  # [N - num_decode_seqs] their tokens' cache slots


@dataclass(frozen=True)
class KernelStep:
    """`KernelPagedAttention`'s per-step metadata, shared by every layer."""

    num_tokens: int  # N
    num_decode_seqs: int  # the first num_decode_seqs tokens are decodes
    # Every token attends through the kernel: a decode step, or a small step token by token
    # (`per_token`). Then `decode` covers all N tokens and the decoder stack may run the step.
    kernel_only: bool
    per_token: bool
    decode: DecodeIndices  # the decodes' rows (all N rows when kernel_only)
    prefill: KernelPrefill | None  # None exactly when kernel_only


def small_step(meta: AttentionMetadata) -> bool:
    """Whether a step with prefill chunks attends to few enough keys to run token by token."""
    # A chunk of q tokens after c cached ones attends to (c + 1) + ... + (c + q) keys.
    keys = sum(
        q * (n - q) + q * (q + 1) // 2
        for q, n in zip(meta.query_lens, meta.context_lens_host, strict=True)
    )
    return keys <= PER_TOKEN_MAX_KEYS


def per_token_indices(meta: AttentionMetadata, num_tokens: int) -> DecodeIndices:
    """The decode kernel's indices with one row per token: its sequence's block table, and its
    own position + 1 as the context (causal by construction)."""
    device = meta.context_lens.device
    q_lens = meta.query_start_loc[1:] - meta.query_start_loc[:-1]  # [B]
    seq = torch.repeat_interleave(torch.arange(meta.num_seqs, device=device), q_lens)  # [N]
    offset = torch.arange(num_tokens, device=device) - meta.query_start_loc[seq]  # [N]
    lens = meta.context_lens[seq] - q_lens[seq] + offset + 1  # [N]
    return DecodeIndices(meta.slot_mapping, meta.block_tables[seq], lens)


class KernelPagedAttention:
    """Decodes (and small steps, token by token) through the C++ decode kernel; the other
    steps' prefill chunks through the C++ prefill kernel."""

    def __init__(self, kernels: CppKernels) -> None:
        self.kernels = kernels

    def prepare(self, meta: AttentionMetadata) -> KernelStep:
        nd, num_tokens = meta.num_decode_seqs, meta.num_tokens
        if nd < meta.num_seqs and small_step(meta):
            decode = per_token_indices(meta, num_tokens)
            return KernelStep(num_tokens, nd, True, True, decode, None)
        prefill: KernelPrefill | None = None
        if nd < meta.num_seqs:
            prefill = KernelPrefill(
                slice(nd, num_tokens),
                meta.block_tables[nd:],
                meta.query_start_loc[nd:] - meta.query_start_loc[nd],
                meta.context_lens[nd:],
                meta.slot_mapping[nd:],
            )
        if prefill is None:  # decodes only: the index tensors as they are
            decode = DecodeIndices(meta.slot_mapping, meta.block_tables, meta.context_lens)
        else:  # the decoding sequences' rows, sliced once for every layer
            decode = DecodeIndices(
                meta.slot_mapping[:nd], meta.block_tables[:nd], meta.context_lens[:nd]
            )
        return KernelStep(num_tokens, nd, prefill is None, False, decode, prefill)

    def forward(
        self,
        q: torch.Tensor,  # [N, H, D]
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,  # [N, KVH, D]
        cache: LayerCache,
        step: KernelStep,
        scale: float,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:  # [N, H, D], or [len(rows), H, D] (PagedAttention)
        p = step.prefill
        if p is None:  # kernel_only
            out = self._decode(q, k, v, cache, step.decode, scale)
            return out if rows is None else out[rows]
        t = p.tokens
        self.kernels.write_kv_cache(k[t], v[t], cache.k, cache.v, p.slot_mapping, cache.k_scale,
                                    cache.v_scale)  # fmt: skip
        nd = step.num_decode_seqs
        if rows is None:
            queries, query_start_loc = q[t], p.query_start_loc
        else:  # the prefill kernel attends a run of each sequence's last queries: the read ones
            decode_rows, prefill_rows = rows[rows < nd], rows[rows >= nd] - nd
            queries = q[t][prefill_rows]
            # [S + 1]: the read rows before each sequence's end, from 0
            read = torch.searchsorted(prefill_rows, p.query_start_loc[1:])
            query_start_loc = torch.cat([read.new_zeros(1), read])
        prefill = self.kernels.paged_prefill_attention(
            queries, cache.k, cache.v, p.block_tables, query_start_loc, p.context_lens,
            scale, k_scale=cache.k_scale, v_scale=cache.v_scale,
        )  # fmt: skip
        if not nd:  # prefill chunks only: no copy into a combined output
            return prefill
        decode = self._decode(q[:nd], k[:nd], v[:nd], cache, step.decode, scale)
        if rows is not None:
            return torch.cat([decode[decode_rows], prefill])
        out = torch.empty_like(q)
        out[:nd] = decode
        out[t] = prefill
        return out

    def _decode(
        self,
        q: torch.Tensor,  # [n, H, D], one row per kernel query
        k: torch.Tensor,  # [n, KVH, D]
        v: torch.Tensor,
        cache: LayerCache,
        decode: DecodeIndices,
        scale: float,
    ) -> torch.Tensor:  # [n, H, D]
        return self.kernels.paged_decode_attention(
            q,
            k,
            v,
            cache.k,
            cache.v,
            decode.slot_mapping,
            decode.block_tables,
            decode.context_lens,
            scale,
            k_scale=cache.k_scale,
            v_scale=cache.v_scale,
        )
