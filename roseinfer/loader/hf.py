"""Hugging Face model directories: `config.json` + `*.safetensors` (single or sharded)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import torch
from safetensors import SafetensorError
from safetensors.torch import safe_open


class WeightsError(ValueError):
    """A model directory whose config or weights cannot be read."""


def read_hf_config(model_dir: str) -> dict:
    path = os.path.join(model_dir, "config.json")
    if not os.path.isfile(path):
        raise WeightsError(f"{model_dir} has no config.json: not a Hugging Face model directory")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise WeightsError(f"{path} is not valid JSON: {e}") from None


def safetensors_files(model_dir: str) -> list[str]:
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        files = [os.path.join(model_dir, s) for s in shards]
        missing = [f for f in files if not os.path.isfile(f)]
        if missing:
            raise WeightsError(f"shard listed in the index is missing: {missing[0]}")
        return files
    files = sorted(
        os.path.join(model_dir, f) for f in os.listdir(model_dir) if f.endswith(".safetensors")
    )
    if not files:
        raise WeightsError(f"{model_dir} has no *.safetensors weights")
    return files


def iter_safetensors(model_dir: str) -> Iterator[tuple[str, torch.Tensor]]:
    for path in safetensors_files(model_dir):
        try:
            with safe_open(path, framework="pt") as f:
                for name in f.keys():
                    yield name, f.get_tensor(name)
        except (SafetensorError, OSError) as e:
            raise WeightsError(f"cannot read {path}: {e}") from None


def read_generation_config(model_dir: str) -> dict:
    """generation_config.json as a dict ({} where there is none)."""
    path = os.path.join(model_dir, "generation_config.json")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    return config if isinstance(config, dict) else {}


def generation_eos_ids(generation_config: dict) -> list[int]:
    """eos ids from generation_config.json (Llama 3 lists several, e.g. <|eot_id|>)."""
    eos = generation_config.get("eos_token_id")
    if eos is None:
        return []
    return [eos] if isinstance(eos, int) else list(eos)
