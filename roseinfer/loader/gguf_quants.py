"""Dequantise GGUF tensor data (llama.cpp's ggml block formats) to float32.

`dequantize(raw, qtype, shape)` covers the float types, the 32-value legacy blocks (Q8_0, Q4_0,
Q4_1, Q5_0, Q5_1), the non-linear IQ4_NL / IQ4_XS, and the 256-value K-quant super-blocks
(Q2_K .. Q6_K) that Ollama's and llama.cpp's Q4_K_M / Q5_K_M / Q6_K / Q3_K / Q2_K files hold.
Results are bit-identical to `gguf.quants.dequantize`: every product and sum is one float32
operation in the same order as gguf-py's (tests/test_gguf_quants.py checks each type).

numpy, not torch: single-threaded numpy is as fast here and, unlike torch's OpenMP pool, does
not slow down tenfold when other processes compete for the cores. Every type is whole-array
arithmetic over a slab of blocks; slabs bound the temporaries (a 128k x 4096 embedding would
otherwise hold several GiB of them) and keep them in cache.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import IQ4_NL

Q = GGMLQuantizationType

# llama.cpp's IQ4_NL / IQ4_XS code book: a 4-bit index -> an int8 level.
_IQ4_LEVELS = np.array(IQ4_NL.kvalues, dtype=np.float32)
_SLAB_VALUES = 1 << 20  # values dequantised per slab (4 MiB of float32)


def _f16(blocks: np.ndarray, at: int) -> np.ndarray:
    """The fp16 at byte `at` of each block, as float32 [n, 1]."""
    return blocks[:, at : at + 2].view(np.float16).astype(np.float32)


def _unpack(x: np.ndarray, bits: int, group: int) -> np.ndarray:
    """Bit fields of `x` [n, k] uint8 -> [n, k * 8 // bits] uint8.

    ggml packs runs of `group` consecutive bytes: values [0, group) are the low `bits` of those
    bytes, the next `group` values the next `bits`, and so on up to bit 8.
    """
    n = len(x)
    shifts = np.arange(0, 8, bits, dtype=np.uint8).reshape(1, 1, -1, 1)
    fields = x.reshape(n, -1, 1, group) >> shifts  # [n, k / group, 8 / bits, group]
    fields &= np.uint8((1 << bits) - 1)
    return fields.reshape(n, -1)


def _scaled(
    out: np.ndarray, q: np.ndarray, scale: np.ndarray, offset: np.ndarray | None = None
) -> None:
    """out = scale * q + offset in float32: out, q [n, groups * size]; scale, offset [n, groups].

    The K-quants' d * q - m is passed as offset -m: IEEE subtraction is addition of the
    negation, so the bits are the same.
    """
    n, groups = scale.shape
    grouped = out.reshape(n, groups, -1)  # a view: out is a contiguous slab
    grouped[...] = q.reshape(n, groups, -1)  # cast in place: faster than a mixed-type multiply
    grouped *= scale[:, :, None]
    if offset is not None:
        grouped += offset[:, :, None]


def _q8_0(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, b[:, 2:].view(np.int8), _f16(b, 0))


def _q4_0(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, _unpack(b[:, 2:], 4, 16).view(np.int8) - np.int8(8), _f16(b, 0))


def _q4_1(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, _unpack(b[:, 4:], 4, 16), _f16(b, 0), _f16(b, 2))


def _q5(b: np.ndarray, at: int) -> np.ndarray:
    """Q5_0/Q5_1 5-bit values: 32 high bits (one uint32) at `at`, then 16 bytes of nibbles."""
    return _unpack(b[:, at + 4 :], 4, 16) | (_unpack(b[:, at : at + 4], 1, 1) << np.uint8(4))


def _q5_0(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, _q5(b, 2).view(np.int8) - np.int8(16), _f16(b, 0))


def _q5_1(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, _q5(b, 4), _f16(b, 0), _f16(b, 2))


def _iq4_nl(b: np.ndarray, out: np.ndarray) -> None:
    _scaled(out, _IQ4_LEVELS[_unpack(b[:, 2:], 4, 16)], _f16(b, 0))


def _iq4_xs(b: np.ndarray, out: np.ndarray) -> None:
    # 8 sub-blocks of 32: 6-bit scales, low 4 bits in bytes 4..7, high 2 bits in the uint16 at 2.
    scales = _unpack(b[:, 4:8], 4, 1) | (_unpack(b[:, 2:4], 2, 1) << np.uint8(4))
    d = _f16(b, 0) * (scales.astype(np.float32) - np.float32(32))  # [n, 8]
    _scaled(out, _IQ4_LEVELS[_unpack(b[:, 8:], 4, 16)], d)


def _q2_k(b: np.ndarray, out: np.ndarray) -> None:
    # 16 sub-blocks of 16: byte j of scales is (min << 4 | scale) of sub-block j.
    scales = b[:, :16]
    d = _f16(b, 80) * (scales & np.uint8(0x0F)).astype(np.float32)  # [n, 16]
    m = _f16(b, 82) * (scales >> np.uint8(4)).astype(np.float32)
    _scaled(out, _unpack(b[:, 16:80], 2, 32), d, -m)


def _q3_k(b: np.ndarray, out: np.ndarray) -> None:
    # 16 sub-blocks of 16 with 6-bit signed scales: low 4 bits in bytes 96..103, high 2 in 104..107.
    scales = _unpack(b[:, 96:104], 4, 8) | (_unpack(b[:, 104:108], 2, 4) << np.uint8(4))
    d = _f16(b, 108) * (scales.astype(np.float32) - np.float32(32))  # [n, 16]
    # A clear bit in the high-bit mask (bytes 0..31) subtracts 4 from the 2-bit value.
    q = _unpack(b[:, 32:96], 2, 32) | (_unpack(b[:, :32], 1, 32) << np.uint8(2))
    _scaled(out, q.view(np.int8) - np.int8(4), d)


def _k_scale_min(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K/Q5_K's 12 bytes -> (scales, mins), each [n, 8] of 6 bits (ggml's get_scale_min_k4)."""
    lo, mid, hi = packed[:, 0:4], packed[:, 4:8], packed[:, 8:12]
    top = np.uint8(0x30)
    scales = np.concatenate([lo & 0x3F, (hi & 0x0F) | ((lo >> 2) & top)], axis=1)
    mins = np.concatenate([mid & 0x3F, (hi >> 4) | ((mid >> 2) & top)], axis=1)
    return scales, mins


def _k_scales(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K/Q5_K: (d * scale, dmin * min), each float32 [n, 8] for 8 sub-blocks of 32."""
    scales, mins = _k_scale_min(b[:, 4:16])
    return _f16(b, 0) * scales.astype(np.float32), _f16(b, 2) * mins.astype(np.float32)


def _q4_k(b: np.ndarray, out: np.ndarray) -> None:
    d, m = _k_scales(b)
    _scaled(out, _unpack(b[:, 16:], 4, 32), d, -m)


def _q5_k(b: np.ndarray, out: np.ndarray) -> None:
    d, m = _k_scales(b)
    q = _unpack(b[:, 48:], 4, 32) | (_unpack(b[:, 16:48], 1, 32) << np.uint8(4))
    _scaled(out, q, d, -m)


def _q6_k(b: np.ndarray, out: np.ndarray) -> None:
    # 16 sub-blocks of 16: low 4 bits in bytes 0..127, high 2 in 128..191, int8 scales in 192..207.
    q = _unpack(b[:, :128], 4, 64) | (_unpack(b[:, 128:192], 2, 32) << np.uint8(4))
    d = _f16(b, 208) * b[:, 192:208].view(np.int8).astype(np.float32)  # [n, 16]
    _scaled(out, q.view(np.int8) - np.int8(32), d)


# qtype -> (blocks [n, type_size] uint8, out [n, block_size] float32, written).
_BLOCK_DEQUANT: dict[Q, Callable[[np.ndarray, np.ndarray], None]] = {
    Q.Q8_0: _q8_0, Q.Q4_0: _q4_0, Q.Q4_1: _q4_1, Q.Q5_0: _q5_0, Q.Q5_1: _q5_1,
    Q.IQ4_NL: _iq4_nl, Q.IQ4_XS: _iq4_xs,
    Q.Q2_K: _q2_k, Q.Q3_K: _q3_k, Q.Q4_K: _q4_k, Q.Q5_K: _q5_k, Q.Q6_K: _q6_k,
}  # fmt: skip
SUPPORTED_TYPES: tuple[Q, ...] = (Q.F32, Q.F16, Q.BF16, *_BLOCK_DEQUANT)


def tensor_nbytes(shape: tuple[int, ...], qtype: int) -> int:
    """Bytes a tensor of `shape` (torch order) and `qtype` takes in the file."""
    block, type_size = GGML_QUANT_SIZES[Q(qtype)]  # bytes per block of `block` values
    return int(np.prod(shape)) // block * type_size


def dequantize(raw: np.ndarray, qtype: int, shape: tuple[int, ...]) -> np.ndarray:
    """uint8 bytes of one tensor -> float32 of `shape`, bit-identical to gguf.quants."""
    if qtype == Q.F32:
        return raw.view(np.float32).reshape(shape).copy()
    if qtype == Q.F16:
        return raw.view(np.float16).astype(np.float32).reshape(shape)
    if qtype == Q.BF16:  # bf16 is the top half of an f32
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(shape)
    block, type_size = GGML_QUANT_SIZES[Q(qtype)]
    blocks = raw.reshape(-1, type_size)
    out = np.empty((len(blocks), block), np.float32)
    step = max(1, _SLAB_VALUES // block)
    for start in range(0, len(blocks), step):
        _BLOCK_DEQUANT[Q(qtype)](blocks[start : start + step], out[start : start + step])
    return out.reshape(shape)
