"""`select_backend` (roseinfer/backends/): which backend runs where, `--enforce-eager` loading no
C++ at all, and the `cpu` backend's logits against the plain PyTorch `torch` backend's."""

from __future__ import annotations

import pytest
import torch

import roseinfer.backends
import roseinfer.kernels
from roseinfer import LLM, SamplingParams
from roseinfer.backends import (
    AttentionChoice,
    BackendOptions,
    CpuBackend,
    Quantization,
    TorchBackend,
    select_backend,
)
from roseinfer.backends.cpu_attention import KernelPagedAttention
from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine
from roseinfer.engine.scheduler import ScheduledSequence
from roseinfer.engine.sequence import Sequence
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.attention import ReferenceAttention
from roseinfer.layers.kv_cache import KVCacheDtype

CPU, CUDA = torch.device("cpu"), torch.device("cuda")
needs_kernels = pytest.mark.skipif(load_cpu_kernels() is None, reason="no C++ kernels here")


def test_enforce_eager_selects_torch_and_the_default_cpu_on_cpu():
    eager = select_backend(EngineConfig(enforce_eager=True), CPU)
    assert type(eager) is TorchBackend and isinstance(eager.attention, ReferenceAttention)
    default = select_backend(EngineConfig(), CPU)
    if load_cpu_kernels() is None:
        assert type(default) is TorchBackend  # no compiler here: plain PyTorch
    else:
        assert type(default) is CpuBackend
        assert isinstance(default.attention, KernelPagedAttention)


def test_flags_are_resolved_once_into_the_options():
    config = EngineConfig(
        quantization="int8", kv_cache_dtype="int8", attention_backend="reference", seed=3
    )
    options = select_backend(config, CPU).options
    assert options == BackendOptions(
        device=CPU,
        enforce_eager=False,
        quantization=Quantization.INT8,
        attention=AttentionChoice.REFERENCE,
        kv_cache_dtype=KVCacheDtype.INT8,
    )


@needs_kernels
def test_attention_flag_is_honoured_inside_the_cpu_backend():
    reference = select_backend(EngineConfig(attention_backend="reference"), CPU)
    assert type(reference) is CpuBackend and type(reference.attention) is ReferenceAttention
    for name in ("auto", "cpu"):
        backend = select_backend(EngineConfig(attention_backend=name), CPU)
        assert isinstance(backend.attention, KernelPagedAttention)


def test_devices_and_flags_that_do_not_go_together():
    with pytest.raises(ValueError, match="CPU only"):
        select_backend(EngineConfig(attention_backend="cpu"), CUDA)
    with pytest.raises(ValueError, match="CPU only"):
        select_backend(EngineConfig(quantization="int8"), CUDA)
    with pytest.raises(ValueError, match="not with enforce_eager"):
        select_backend(EngineConfig(attention_backend="cpu", enforce_eager=True), CPU)
    with pytest.raises(ValueError, match="attention_backend must be one of"):
        EngineConfig(attention_backend="flash")
    # Off CPU: plain PyTorch (reference attention), whatever the C++ kernels would do here.
    cuda = select_backend(EngineConfig(), CUDA)
    assert type(cuda) is TorchBackend and type(cuda.attention) is ReferenceAttention


def test_enforce_eager_loads_and_calls_no_cpp(tiny_model_dir, monkeypatch):
    """A whole generation with `--enforce-eager` and an int8 model: the C++ extension is never
    asked for, and nothing the `cpu` backend makes is in the model."""

    def refuse() -> None:
        raise AssertionError("the C++ kernels were loaded with enforce_eager")

    monkeypatch.setattr(roseinfer.backends, "load_cpu_kernels", refuse)
    monkeypatch.setattr(roseinfer.kernels, "load_cpu_kernels", refuse)
    monkeypatch.setattr(CpuBackend, "__init__", lambda *a: refuse())
    llm = LLM(
        model=tiny_model_dir("llama"),
        dtype="bfloat16",
        quantization="int8",
        enforce_eager=True,
        num_kv_blocks=64,
        block_size=4,
    )
    (out,) = llm.generate(["hello there"], SamplingParams(max_new_tokens=5, temperature=0))
    assert len(out.token_ids) == 5
    assert type(llm.loaded.backend) is TorchBackend
    assert llm.engine.runner.decoder_stack is None
    kinds = {type(m).__module__ for m in llm.loaded.model.modules()}
    assert not any(k.startswith("roseinfer.backends") for k in kinds)


def _step_logits(engine: InferenceEngine, prompts: list[list[int]]) -> torch.Tensor:
    """Every position's logits: a prefill step of whole prompts, a chunked one, then decodes."""
    core = engine.new_core(num_kv_blocks=128, block_size=4)
    seqs = [Sequence(i, list(p), len(p), SamplingParams()) for i, p in enumerate(prompts)]
    rows = []
    for chunks in ([4, 6], [len(p) - c for p, c in zip(prompts, [4, 6], strict=True)], [1, 1]):
        batch = []
        for seq, n in zip(seqs, chunks, strict=True):
            if seq.num_computed_tokens + n > len(seq.token_ids):
                seq.token_ids.append(7 + seq.seq_id)  # teacher-forced decode tokens
            core.block_manager.allocate(seq, n)
            batch.append(ScheduledSequence(seq, n))
        rows.append(core.runner.compute_logits(batch, all_positions=True))
        for s in batch:
            s.seq.num_computed_tokens += s.num_new_tokens
    return torch.cat(rows)


@needs_kernels
@pytest.mark.parametrize("kind", ["llama", "qwen3", "gpt2"])
def test_cpu_backend_logits_match_the_torch_backend(tiny_model_dir, kind):
    engines = {
        eager: InferenceEngine(
            EngineConfig(model=tiny_model_dir(kind), dtype="float32", enforce_eager=eager)
        )
        for eager in (False, True)
    }
    assert type(engines[False].loaded.backend) is CpuBackend
    assert type(engines[True].loaded.backend) is TorchBackend
    gen = torch.Generator().manual_seed(0)
    prompts = [torch.randint(3, 300, (n,), generator=gen).tolist() for n in (9, 30)]
    fast, plain = (_step_logits(engines[e], prompts) for e in (False, True))
    assert fast.shape == plain.shape == (9 + 30 + 2, engines[True].model_config.vocab_size)
    # The same math in another summation order (fp32).
    torch.testing.assert_close(fast, plain, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("path", ["plain", "cpu kernels", "cpu per token", "cpu stack"])
@pytest.mark.parametrize("kind", ["llama", "gpt2"])
def test_a_step_runs_its_last_layer_for_the_rows_it_reads(tiny_model_dir, kind, path, monkeypatch):
    """A step of a prompt's first chunk (it reads none of its rows), another prompt's last chunk
    (its last row: it samples), a prefill with prompt logprobs (every row), a decode (its row)
    and a prompt's one-token first chunk (none; the kernels take it with the decodes): the last
    layer's attention output and MLP run on the read rows alone, and the logits sampled from are
    every row's forward's at them, on the plain path and the `cpu` backend's layer by layer
    (decodes by the decode kernel and chunks by the prefill kernel, or, a step this small, every
    token by the decode kernel); where the `cpu` backend's fused decoder stack runs the step
    (Llama's, small steps), it computes every row and gives those."""
    if path != "plain" and load_cpu_kernels() is None:
        pytest.skip("no C++ kernels here")
    engine = InferenceEngine(
        EngineConfig(model=tiny_model_dir(kind), dtype="float32", enforce_eager=path == "plain")
    )
    core = engine.new_core(num_kv_blocks=128, block_size=4)
    if path in ("cpu kernels", "cpu per token"):
        core.runner.decoder_stack = None  # this small step layer by layer
    if path == "cpu kernels":  # and its chunks through the prefill kernel
        monkeypatch.setattr(roseinfer.backends.cpu_attention, "PER_TOKEN_MAX_KEYS", 0)
    stacked = core.runner.decoder_stack is not None
    assert stacked == (path == "cpu stack" and kind == "llama")
    model = engine.loaded.model
    last_mlp = model.model.layers[-1].mlp if kind == "llama" else model.transformer["h"][-1].mlp
    mlp = last_mlp if kind == "llama" else last_mlp["c_fc"]  # GPT-2's MLP is a ModuleDict
    mlp_rows: list[int] = []
    mlp.register_forward_hook(lambda m, args, out: mlp_rows.append(args[0].shape[0]))
    prompts = [range(5, 17), range(20, 29), range(40, 46), range(60, 65), range(80, 87)]
    params = [SamplingParams()] * 5
    params[2] = SamplingParams(prompt_logprobs=2)
    seqs = [
        Sequence(i, list(p), len(p), sp)
        for i, (p, sp) in enumerate(zip(prompts, params, strict=True))
    ]
    for seq, n in ((seqs[1], 5), (seqs[3], 5)):  # K/V of their first n tokens, an earlier step
        core.block_manager.allocate(seq, n)
        core.runner.compute_logits([ScheduledSequence(seq, n)], all_positions=True)
        seq.num_computed_tokens = n
    seqs[3].token_ids.append(70)  # its first generated token, fed back
    batch = []  # the one-token chunk before the decode: the decodes' rows are 4, then 3
    for i, n in zip([0, 1, 2, 4, 3], [8, 4, 6, 1, 1], strict=True):
        core.block_manager.allocate(seqs[i], n)
        batch.append(ScheduledSequence(seqs[i], n))
    assert [s.samples for s in batch] == [False, True, True, False, True]
    mlp_rows.clear()
    read = core.runner.compute_logits(batch)  # the sampling sequences' last rows
    assert mlp_rows == ([] if stacked else [1 + 6 + 1])  # seq 1's last, seq 2's, seq 3's
    mlp_rows.clear()
    every = core.runner.compute_logits(batch, all_positions=True)  # in batch order
    assert mlp_rows == ([] if stacked else [8 + 4 + 6 + 1 + 1])
    torch.testing.assert_close(read, every[[8 + 4 - 1, 8 + 4 + 6 - 1, 8 + 4 + 6 + 1]],
                               rtol=1e-5, atol=1e-5)  # fmt: skip
    mlp_rows.clear()
    only_first = core.runner.compute_logits([batch[0]])  # a chunk that reads nothing
    assert only_first.shape == (0, every.shape[1]) and mlp_rows == []
