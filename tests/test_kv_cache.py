"""The KV cache (`roseinfer/layers/kv_cache.py`): the int8 cache on plain tensors, then an
engine with `--kv-cache-dtype int8` against the same engine with the model-dtype cache."""

from __future__ import annotations

import pytest
import torch

from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine, OnlineScheduler
from roseinfer.engine.scheduler import ScheduledSequence
from roseinfer.engine.sequence import Sequence
from roseinfer.layers.kv_cache import KVCache, KVCacheDtype
from roseinfer.models.config import ModelConfig
from roseinfer.sampling_params import SamplingParams


def small_config() -> ModelConfig:
    return ModelConfig(
        architecture="LlamaForCausalLM",
        family="llama",
        vocab_size=32,
        hidden_size=32,
        num_layers=2,
        num_heads=4,
        num_kv_heads=2,
        head_dim=8,
        intermediate_size=64,
        max_position_embeddings=64,
        norm_eps=1e-5,
        tie_word_embeddings=False,
    )


def test_int8_cache_writes_and_gathers_what_it_was_given_within_rounding():
    mc = small_config()
    cache = KVCache(mc, num_blocks=6, block_size=4, dtype=torch.bfloat16, device="cpu",
                    kv_cache_dtype=KVCacheDtype.INT8)  # fmt: skip
    layer = cache.layers[1]
    assert layer.k.dtype == torch.int8 and layer.k_scale.shape == (6, 2, 4)
    torch.manual_seed(0)
    k = torch.randn(5, 2, mc.head_dim, dtype=torch.bfloat16)
    v = torch.randn(5, 2, mc.head_dim, dtype=torch.bfloat16) * 100
    slots = torch.tensor([8, 9, 10, 11, 20])  # block 2 whole, then block 5's first row
    layer.write(slots // 4, slots % 4, k, v)
    keys, values = layer.gather(torch.tensor([2, 5]), num_seqs=1, dtype=torch.bfloat16)
    assert keys.shape == (1, 2, 8, mc.head_dim) and keys.dtype == torch.bfloat16
    got_k = torch.cat([keys[0, :, :4], keys[0, :, 4:5]], dim=1).transpose(0, 1)  # [5, 2, D]
    got_v = torch.cat([values[0, :, :4], values[0, :, 4:5]], dim=1).transpose(0, 1)
    for got, want in ((got_k, k), (got_v, v)):
        step = want.float().abs().amax(-1, keepdim=True) / 127
        assert bool(
            ((got.float() - want.float()).abs() <= step * 0.51 + want.float().abs() / 128).all()
        )
    assert not cache.layers[0].k.any()  # other layers untouched


def test_block_bytes_and_validation():
    mc = small_config()  # head_dim 8
    bf16 = KVCache.block_bytes(mc, 16, torch.bfloat16, KVCacheDtype.MODEL)
    int8 = KVCache.block_bytes(mc, 16, torch.bfloat16, KVCacheDtype.INT8)
    assert bf16 == 2 * 2 * 16 * 2 * 8 * 2 and int8 == 2 * 2 * 16 * 2 * (8 + 4)
    with pytest.raises(ValueError, match="kv_cache_dtype must be one of"):
        EngineConfig(kv_cache_dtype="fp8")
    with pytest.raises(ValueError, match="kv_cache_dtype"):
        KVCache(mc, 4, 4, torch.float32, "cpu", kv_cache_dtype="q4")


@pytest.fixture(scope="module")
def engines(tiny_model_dir):
    path = tiny_model_dir("llama")
    return {
        kv: InferenceEngine(EngineConfig(model=path, dtype="bfloat16", kv_cache_dtype=kv))
        for kv in ("auto", "int8")
    }


def test_int8_cache_holds_about_twice_the_tokens(engines):
    cores = {kv: e.new_core(kv_cache_memory=0.01) for kv, e in engines.items()}
    head_dim = engines["auto"].model_config.head_dim
    blocks = {kv: c.runner.num_blocks for kv, c in cores.items()}
    assert blocks["int8"] / blocks["auto"] == pytest.approx(2 * head_dim / (head_dim + 4), rel=0.02)


@pytest.mark.parametrize("attention_backend", ["auto", "reference"])
def test_int8_cache_logits_stay_close_to_the_bf16_cache(engines, attention_backend):
    """The same prefill chunk then decode steps under both caches: teacher-forced logits agree
    within int8 rounding, on the C++ kernel and on the plain PyTorch path."""
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(3, 300, (20,), generator=gen).tolist()
    logits = {}
    for kv, engine in engines.items():
        core = engine.new_core(num_kv_blocks=32, block_size=4, attention_backend=attention_backend)
        seq = Sequence(0, list(prompt), len(prompt), SamplingParams())
        steps = []
        for n in (12, 8, 1, 1, 1):  # a chunk, the rest of the prompt (cached keys), decodes
            if seq.num_computed_tokens + n > len(seq.token_ids):
                seq.token_ids.append(int(steps[-1][-1].argmax()))
            core.block_manager.allocate(seq, n)
            out = core.runner.compute_logits([ScheduledSequence(seq, n)], all_positions=True)
            steps.append(out.float())
            seq.num_computed_tokens += n
        logits[kv] = torch.cat(steps)
    a, b = logits["auto"], logits["int8"]
    assert not torch.equal(a, b)  # the int8 cache really is in use
    assert (a - b).abs().max() <= 0.05 * a.abs().max()
    assert bool((a.argmax(-1) == b.argmax(-1)).float().mean() >= 0.9)


def test_int8_cache_serves_batches_with_preemption(engines):
    """Many requests through a pool too small for all: int8 blocks are freed and reused like
    any others, and every request finishes with its full output."""
    sched = OnlineScheduler(engines["int8"], num_kv_blocks=24, block_size=4, max_num_seqs=8)
    params = SamplingParams(max_new_tokens=12, temperature=0, ignore_eos=True)
    rids = [
        sched.add_request(prompt_token_ids=[5 + i] * (10 + i), params=params) for i in range(12)
    ]
    for _ in range(2000):
        if not sched.has_unfinished():
            break
        sched.step()
    assert not sched.has_unfinished()
    assert all(len(sched.get_generated_ids(r)) == 12 for r in rids)
    assert any(sched.get_sequence(r).num_preemptions for r in rids)
