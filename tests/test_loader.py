"""Model sources end to end: sharded safetensors, dtype resolution."""

from __future__ import annotations

import json
import os

import torch

from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.engine import InferenceEngine
from roseinfer.loader import resolve_dtype


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
