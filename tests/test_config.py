"""`EngineConfig`: every field checked when the object is made (before any model loads), and
the load-time fields of a model that is already loaded refused where they would not act."""

from __future__ import annotations

import math

import pytest

from roseinfer import LLM, InferenceEngine, OfflineScheduler, OnlineScheduler, SchedulerManager
from roseinfer.backends import TorchBackend
from roseinfer.config import LOAD_FIELDS, EngineConfig

BAD_FIELDS = [
    ({"kv_cache_memory": math.nan}, "kv_cache_memory must be a finite number"),
    ({"kv_cache_memory": math.inf}, "kv_cache_memory must be a finite number"),
    ({"kv_cache_memory": "1"}, "kv_cache_memory must be a finite number"),
    ({"max_num_seqs": 2.5}, "max_num_seqs must be an integer >= 1"),
    ({"max_num_batched_tokens": True}, "max_num_batched_tokens must be an integer >= 1"),
    ({"lone_prefill_tokens": -1}, "lone_prefill_tokens must be an integer >= 0"),
    ({"lone_prefill_tokens": 2.5}, "lone_prefill_tokens must be an integer >= 0"),
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


@pytest.fixture(scope="module")
def engine(model_dir) -> InferenceEngine:
    return InferenceEngine(EngineConfig(model=model_dir, dtype="float32", max_model_len=16))


LOAD_TIME_CHANGES = [
    {"dtype": "bfloat16"},
    {"quantization": "int8"},
    {"enforce_eager": True},
    {"model": "/does/not/exist"},
    {"chat_template": "{{ 'X' }}"},
    {"dtype": "float16", "quantization": "int8"},
]


def _paths(engine: InferenceEngine, fields: dict):
    """Every way of building an engine over `engine`'s loaded model with `fields`."""
    loaded = engine.loaded
    yield "OnlineScheduler", lambda: OnlineScheduler(engine, **fields)
    yield "OfflineScheduler", lambda: OfflineScheduler(engine, **fields)
    yield "new_core", lambda: engine.new_core(**fields)
    yield "SchedulerManager", lambda: SchedulerManager(engine, EngineConfig(**fields))
    yield "LLM(loaded=)", lambda: LLM(loaded=loaded, **fields)
    yield "InferenceEngine(loaded=)", lambda: InferenceEngine(EngineConfig(**fields), loaded=loaded)


@pytest.mark.parametrize("fields", LOAD_TIME_CHANGES)
def test_load_time_fields_of_a_loaded_model_are_refused_on_every_path(engine, fields):
    for path, build in _paths(engine, fields):
        with pytest.raises(ValueError, match="load-time") as e:
            build()
        for name, value in fields.items():
            assert f"{name}={value!r}" in str(e.value), path


def test_matching_load_time_fields_and_per_engine_fields_act(engine, model_dir):
    same = {"model": model_dir, "dtype": "float32", "device": "cpu", "quantization": "none"}
    for path, build in _paths(engine, {**same, "max_num_seqs": 3, "seed": 5}):
        made = build()
        config = made.config if hasattr(made, "config") else made.core.config
        if isinstance(made, SchedulerManager):
            made.shutdown()
        assert (config.max_num_seqs, config.seed, config.model) == (3, 5, model_dir), path
    # LLM(loaded=) with no load-time field: the loaded model's, not the defaults
    llm = LLM(loaded=engine.loaded)
    assert (llm.config.model, llm.config.dtype) == (model_dir, "float32")
    # a per-engine attention backend still acts (the runner picks its own backend)
    core = engine.new_core(attention_backend="reference")
    assert core.config.attention_backend == "reference"


def test_scheduler_manager_config_keeps_what_it_does_not_set(model_dir):
    eager = InferenceEngine(EngineConfig(model=model_dir, enforce_eager=True, max_model_len=16))
    manager = SchedulerManager(eager, EngineConfig(max_num_seqs=4), start_thread=False)
    try:
        core = manager.core
        # not the C++ decoder stack over a model whose layers are plain PyTorch
        assert core.config.enforce_eager is True and core.runner.decoder_stack is None
        assert isinstance(core.runner.backend, TorchBackend)
        assert (core.config.model, core.config.max_num_seqs) == (model_dir, 4)
        assert core.max_model_len == core.config.max_model_len == 16  # not the model's 256
    finally:
        manager.shutdown(0)
    # a field set to its default value is set by keyword (in a config it reads as left out)
    seeded = InferenceEngine(EngineConfig(model=model_dir, seed=5, enable_prefix_cache=False))
    manager = SchedulerManager(seeded, EngineConfig(seed=0), seed=0, enable_prefix_cache=True,
                               start_thread=False)  # fmt: skip
    try:
        assert (manager.core.config.seed, manager.core.config.enable_prefix_cache) == (0, True)
    finally:
        manager.shutdown(0)


def test_load_fields_are_the_ones_that_shape_the_model():
    assert set(LOAD_FIELDS) == {
        "model", "hf_model_id", "checkpoint_path", "tokenizer_name", "chat_template",
        "device", "dtype", "quantization", "enforce_eager",
    }  # fmt: skip


def test_max_model_len_past_the_model_context_is_refused(engine, model_dir):
    message = "max_model_len 100000 is longer than the model's context .*256"
    with pytest.raises(ValueError, match=message):
        LLM(model_dir, max_model_len=100_000)
    with pytest.raises(ValueError, match=message):
        engine.new_core(max_model_len=100_000)
    with pytest.raises(ValueError, match=message):
        InferenceEngine(EngineConfig(max_model_len=100_000), loaded=engine.loaded)
    # none given: the config says what is enforced
    llm = LLM(loaded=engine.loaded)
    assert llm.config.max_model_len == llm.engine.max_model_len == 256
    assert engine.new_core(max_model_len=None).config.max_model_len == 256
    assert engine.config.max_model_len == engine.max_model_len == 16


def test_tokenizer_name_without_a_checkpoint_is_refused(model_dir):
    with pytest.raises(ValueError, match="tokenizer_name"):
        LLM(model_dir, tokenizer_name="/nonexistent/tokenizer")
