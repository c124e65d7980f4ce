"""The GGUF block types Ollama's and llama.cpp's files hold (K-quants, Q5_0/Q5_1, IQ4_NL/XS),
checked bit for bit against gguf-py's reference dequantisation on random blocks."""

from __future__ import annotations

import struct

import gguf
import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as Q
from gguf_files import F16_FIELDS, finish, new_writer, random_blocks

from roseinfer.loader import gguf_quants
from roseinfer.loader.gguf import GGUFError, read_gguf
from roseinfer.loader.gguf_quants import dequantize

BLOCK_TYPES = list(F16_FIELDS)  # every quantised type we read


def _same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    return got.dtype == np.float32 and np.array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("qtype", BLOCK_TYPES, ids=lambda q: q.name)
def test_random_blocks_match_gguf_py(qtype: Q, monkeypatch) -> None:
    # Slabs of 3 K-quant (24 legacy) blocks, so 40 blocks cross several slab seams.
    monkeypatch.setattr(gguf_quants, "_SLAB_VALUES", 3 * 256 + 1)
    raw = random_blocks(qtype, 40, np.random.default_rng(int(qtype)))
    block = GGML_QUANT_SIZES[qtype][0]
    shape = (8, 5 * block)
    expected = gguf.quants.dequantize(raw, qtype).reshape(shape)
    assert np.isfinite(expected).all() and np.unique(expected).size > 10 * 40  # not degenerate
    assert _same_bits(dequantize(raw.reshape(-1), qtype, shape), expected)


def test_rows_must_fill_blocks(tmp_path) -> None:
    path = str(tmp_path / "ragged.gguf")
    w = new_writer(path)
    w.add_tensor("token_embd.weight", np.zeros((8, 64), np.float32))
    blocks = random_blocks(Q.Q4_K, 32, np.random.default_rng(0), 0.1)
    w.add_tensor("blk.0.attn_q.weight", blocks.reshape(32, -1), raw_dtype=Q.Q4_K)  # [32, 256]
    finish(w)
    # The writer only writes whole blocks: make the header say 64 rows of 128 values (GGUF lists
    # dims fastest first), the same bytes but rows no 256-value Q4_K block fits.
    data = (tmp_path / "ragged.gguf").read_bytes()
    name = b"blk.0.attn_q.weight"
    dims = data.index(name) + len(name) + 4  # past the name and its dimension count
    assert data[dims : dims + 16] == struct.pack("<QQ", 256, 32)
    patched = data[:dims] + struct.pack("<QQ", 128, 64) + data[dims + 16 :]
    (tmp_path / "ragged.gguf").write_bytes(patched)
    with pytest.raises(GGUFError, match="attn_q.weight's rows do not fill whole Q4_K blocks"):
        read_gguf(path)
