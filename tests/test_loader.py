"""Model sources end to end: sharded safetensors, dtype resolution."""

from __future__ import annotations

import ctypes
import json
import os

import pytest
import torch

from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine
from roseinfer.loader import resolve_dtype, return_freed_memory
from roseinfer.sampling_params import SamplingParams


def test_sharded_safetensors_load_like_a_single_file(tiny_model_dir, tmp_path) -> None:
    import transformers

    single = tiny_model_dir("llama")
    sharded = str(tmp_path / "sharded")
    model = transformers.AutoModelForCausalLM.from_pretrained(single, dtype=torch.float32)
    model.save_pretrained(sharded, max_shard_size="40KB")
    transformers.AutoTokenizer.from_pretrained(single).save_pretrained(sharded)
    index = json.load(open(os.path.join(sharded, "model.safetensors.index.json")))
    assert len(set(index["weight_map"].values())) > 1  # really sharded

    params = SamplingParams(max_new_tokens=12, temperature=0, ignore_eos=True)
    outs = []
    for path in (single, sharded):
        engine = InferenceEngine(EngineConfig(model=path, dtype="float32"))
        outs.append(engine.generate_ids(engine.encode_prompt("Hello, world!"), params))
    assert outs[0] == outs[1]


def test_dtype_auto_is_explicit_elsewhere() -> None:
    assert resolve_dtype("float32", "cpu") is torch.float32
    assert resolve_dtype("bfloat16", "cpu") is torch.bfloat16
    assert resolve_dtype("auto", "cpu") in (torch.bfloat16, torch.float32)


def resident_mb() -> float:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_return_freed_memory_gives_the_heaps_free_pages_back() -> None:
    """Loading frees many mid-sized tensors (the file's, dequantized and packed copies) that
    glibc keeps resident between the ones still alive; after the loader's trim they are gone."""
    try:
        ctypes.CDLL(None).malloc_trim  # noqa: B018
        resident_mb()
    except (OSError, AttributeError):
        pytest.skip("malloc_trim and /proc are glibc's and Linux's")
    blocks = [torch.ones(100_000, dtype=torch.uint8) for _ in range(2000)]  # 200 MB, in the heap
    kept = blocks[::10]  # pinned between the freed ones: the heap's top cannot shrink
    del blocks
    before = resident_mb()
    assert return_freed_memory()
    assert before - resident_mb() > 100, (before, resident_mb())
    assert all(int(b[0]) == 1 for b in kept)
