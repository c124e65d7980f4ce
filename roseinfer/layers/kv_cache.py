"""The paged KV cache: every layer's key and value blocks, in the model's dtype or in int8.

Each layer's K (and V) is `[num_blocks, KVH, block_size, D]`, head-major (see attention.py).
With `--kv-cache-dtype int8` each (token, KV head) row is stored as int8 with one fp32 scale,
`x ~ scale * q`, `scale = max|x| / 127` (per row, as llama.cpp's q8_0 cache keeps a scale per
32 values): 68 bytes per row of 64 instead of bf16's 128, to hold and to read. Only the C++
decode kernel and the reference path's gather read it; a fresh prompt's prefill attends to its
own K/V as computed. int8 keys are laid out for the kernel's dot products: each (block, KV head)'s
`[block_size, D]` bytes hold `[D/4, block_size, 4]` (the next 4 inputs of consecutive keys
together) and each byte is the value plus 128 (`q ^ 0x80`, read as unsigned); values keep rows.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, NamedTuple

import torch

if TYPE_CHECKING:  # roseinfer.models imports the layers
    from roseinfer.models.config import ModelConfig

INT8_MAX = 127


class KVCacheDtype(Enum):
    """`--kv-cache-dtype`, resolved once (`roseinfer.backends.BackendOptions`)."""

    MODEL = "auto"  # the model's dtype
    INT8 = "int8"  # int8 rows with one fp32 scale each


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """x [..., D] -> (int8 [..., D], fp32 scale [...]), rounded half to even: the C++ kernel's
    `quantize_row` gives the same bits."""
    xf = x.float()
    scale = xf.abs().amax(dim=-1) / INT8_MAX  # [...]
    q = torch.where(scale[..., None] > 0, xf / scale[..., None], 0.0)
    return q.round_().clamp_(-INT8_MAX, INT8_MAX).to(torch.int8), scale


class LayerCache(NamedTuple):
    """One layer's cache; `k_scale`/`v_scale` [num_blocks, KVH, block_size] fp32 for int8."""

    k: torch.Tensor  # [num_blocks, KVH, block_size, D]
    v: torch.Tensor
    k_scale: torch.Tensor | None = None
    v_scale: torch.Tensor | None = None

    def write(
        self,
        blocks: torch.Tensor,  # [N] block of each new token
        offsets: torch.Tensor,  # [N] its row in the block
        k: torch.Tensor,  # [N, KVH, D]
        v: torch.Tensor,
    ) -> None:
        if self.k_scale is None:
            self.k[blocks, :, offsets] = k
            self.v[blocks, :, offsets] = v
            return
        q, s = quantize_rows(k)
        keys = _transposed_keys(self.k)  # [num_blocks, KVH, D/4, block_size, 4]
        keys[blocks, :, :, offsets] = (q ^ -128).view(*q.shape[:2], -1, 4)
        self.k_scale[blocks, :, offsets] = s
        q, s = quantize_rows(v)
        self.v[blocks, :, offsets] = q
        # v_scale is set with k_scale (KVCache builds both or neither): no check per layer.
        self.v_scale[blocks, :, offsets] = s  # type: ignore[index]

    def gather(
        self, block_ids: torch.Tensor, num_seqs: int, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Each sequence's keys and values, contiguous, in `dtype`: two [b, KVH, L, D] with
        `block_ids` the b sequences' blocks, row-major, and L their count times block_size."""
        return (
            _gather(self.k, self.k_scale, block_ids, num_seqs, dtype, keys=True),
            _gather(self.v, self.v_scale, block_ids, num_seqs, dtype),
        )


def _transposed_keys(cache: torch.Tensor) -> torch.Tensor:
    """An int8 key cache as its layout: [num_blocks, KVH, D/4, block_size, 4] (module docstring)."""
    num_blocks, kv_heads, block_size, head_dim = cache.shape
    return cache.view(num_blocks, kv_heads, head_dim // 4, block_size, 4)


def _gather(
    cache: torch.Tensor,
    scales: torch.Tensor | None,
    block_ids: torch.Tensor,
    num_seqs: int,
    dtype: torch.dtype,
    keys: bool = False,
) -> torch.Tensor:
    _, kv_heads, block_size, head_dim = cache.shape
    if scales is not None and keys:  # back to rows, minus the 128
        out = _transposed_keys(cache).index_select(0, block_ids).transpose(2, 3)
        out = out.reshape(-1, kv_heads, block_size, head_dim) ^ -128
    else:
        out = cache.index_select(0, block_ids)  # [b * max_blocks, KVH, block_size, D]
    if scales is not None:
        out = (out.float() * scales.index_select(0, block_ids)[..., None]).to(dtype)
    out = out.view(num_seqs, -1, kv_heads, block_size, head_dim).transpose(1, 2)
    return out.reshape(num_seqs, kv_heads, -1, head_dim)


class KVCache:
    """Every layer's cache, allocated at once; `layers[i]` is layer i's `LayerCache`."""

    def __init__(
        self,
        model_config: ModelConfig,
        num_blocks: int,
        block_size: int,
        dtype: torch.dtype,
        device: torch.device | str,
        kv_cache_dtype: KVCacheDtype = KVCacheDtype.MODEL,
    ) -> None:
        if not isinstance(kv_cache_dtype, KVCacheDtype):
            raise ValueError(f"kv_cache_dtype must be a KVCacheDtype, got {kv_cache_dtype!r}")
        mc = model_config
        self.quantized = kv_cache_dtype is KVCacheDtype.INT8
        if self.quantized and mc.head_dim % 4:
            raise ValueError(
                f"an int8 KV cache needs head_dim a multiple of 4 (its keys are stored in groups "
                f"of 4), this model's is {mc.head_dim}"
            )
        rows = (mc.num_layers, 2, num_blocks, mc.num_kv_heads, block_size)
        # Zeroed, not empty: masked-out slots must not hold NaN bit patterns (0 * NaN = NaN).
        self.data = torch.zeros(
            *rows, mc.head_dim, dtype=torch.int8 if self.quantized else dtype, device=device
        )  # [layers, k/v, num_blocks, KVH, block_size, D]
        self.scales = (
            torch.zeros(rows, dtype=torch.float32, device=device) if self.quantized else None
        )  # [layers, k/v, num_blocks, KVH, block_size]
        self.layers = [
            LayerCache(
                self.data[i, 0],
                self.data[i, 1],
                None if self.scales is None else self.scales[i, 0],
                None if self.scales is None else self.scales[i, 1],
            )
            for i in range(mc.num_layers)
        ]
        # The decoder stack's (k_caches, v_caches, k_scales, v_scales), built once: scales empty
        # unless int8.
        self.stack_args = (
            [c.k for c in self.layers],
            [c.v for c in self.layers],
            [s for c in self.layers if (s := c.k_scale) is not None],
            [s for c in self.layers if (s := c.v_scale) is not None],
        )

    @staticmethod
    def block_bytes(
        model_config: ModelConfig,
        block_size: int,
        dtype: torch.dtype,
        kv_cache_dtype: KVCacheDtype,
    ) -> int:
        """Bytes of K and V (and their scales) for one block across all layers."""
        mc = model_config
        if kv_cache_dtype is KVCacheDtype.INT8:
            row = mc.head_dim + 4  # int8 values and an fp32 scale
        else:
            row = mc.head_dim * torch.empty((), dtype=dtype).element_size()
        return 2 * mc.num_layers * block_size * mc.num_kv_heads * row
