"""`EngineConfig`: every field checked when the object is made (before any model loads), and
the load-time fields of a model that is already loaded refused where they would not act."""

from __future__ import annotations

import math

import pytest

from roseinfer import LLM
from roseinfer.config import EngineConfig

BAD_FIELDS = [
    ({"kv_cache_memory": math.nan}, "kv_cache_memory must be a finite number"),
    ({"kv_cache_memory": math.inf}, "kv_cache_memory must be a finite number"),
    ({"kv_cache_memory": "1"}, "kv_cache_memory must be a finite number"),
    ({"max_num_seqs": 2.5}, "max_num_seqs must be an integer >= 1"),
    ({"max_num_batched_tokens": True}, "max_num_batched_tokens must be an integer >= 1"),
    ({"block_size": "16"}, "block_size must be an integer >= 1"),
    ({"max_model_len": 100.0}, "max_model_len must be an integer >= 2"),
    ({"num_kv_blocks": 0.5}, "num_kv_blocks must be an integer >= 1"),
    ({"enable_prefix_cache": "false"}, "enable_prefix_cache must be a boolean"),
    ({"enforce_eager": "no"}, "enforce_eager must be a boolean"),
    ({"seed": None}, "seed must be an integer"),
    ({"seed": 1e23}, "seed must be an integer"),
    ({"seed": 2**70}, "seed must be an integer"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"device": "cudaXYZ"}, "device must be 'cpu' or 'cuda"),
    ({"device": None}, "device must be 'cpu' or 'cuda"),
    ({"model": ""}, "model must be a non-empty string"),
    ({"chat_template": 3}, "chat_template must be a non-empty string"),
    ({"tokenizer_name": "gpt2"}, "tokenizer_name .* only with checkpoint_path"),
    ({"attention_backend": "cpu", "enforce_eager": True}, "attention_backend 'cpu'.*enforce_eager"),
    ({"device": "cuda", "quantization": "int8"}, "quantization 'int8' runs on CPU only"),
    ({"device": "cuda:1", "attention_backend": "cpu"}, "attention_backend 'cpu' runs on CPU only"),
]


@pytest.mark.parametrize("fields,message", BAD_FIELDS)
def test_bad_fields_are_refused_naming_them(fields, message):
    with pytest.raises(ValueError, match=message):
        EngineConfig(**fields)


def test_bad_fields_are_refused_before_the_model_loads(tmp_path):
    # A model that does not exist: had it been loaded first, the error would name the path.
    for fields, message in BAD_FIELDS:
        with pytest.raises(ValueError, match=message):
            LLM(**{"model": str(tmp_path / "missing"), **fields})
    # what is right still passes
    cfg = EngineConfig(seed=-1, device="cuda:0", kv_cache_memory=2, max_model_len=2)
    assert (cfg.seed, cfg.kv_cache_memory) == (-1, 2)
    assert EngineConfig(checkpoint_path="x.pt", tokenizer_name="gpt2").tokenizer_name == "gpt2"


# ---- with a model ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model_dir(tiny_model_dir) -> str:
    return tiny_model_dir("llama")


def test_tokenizer_name_without_a_checkpoint_is_refused(model_dir):
    with pytest.raises(ValueError, match="tokenizer_name"):
        LLM(model_dir, tokenizer_name="/nonexistent/tokenizer")
