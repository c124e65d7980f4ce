"""The C++ decoder stack (roseinfer/kernels/decode_stack.cpp) against the module path it
replaces: the same kernels in the same order, so a decode step's logits are bit-identical."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable

import pytest
import torch
from conftest import torch_threads

from roseinfer.backends.cpu_linear import SMALL_BATCH_ROWS
from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine
from roseinfer.engine.scheduler import ScheduledSequence
from roseinfer.engine.sequence import Sequence
from roseinfer.kernels import load_cpu_kernels
from roseinfer.sampling_params import SamplingParams

pytestmark = pytest.mark.skipif(load_cpu_kernels() is None, reason="no C++ kernels here")


class CountingStack:
    """Stands in for a runner's decoder stack (optionally with a lower row limit), counting the
    steps that go through it."""

    def __init__(self, stack: object, max_rows: int | None = None) -> None:
        if max_rows is not None:
            stack = dataclasses.replace(stack, max_rows=max_rows)
        self.stack, self.calls = stack, 0

    @property
    def max_rows(self) -> int:
        return self.stack.max_rows

    def for_step(self, step: object, kv_cache: object) -> Callable | None:
        run = self.stack.for_step(step, kv_cache)
        if run is None:
            return None

        def counted(*args: torch.Tensor) -> torch.Tensor:
            self.calls += 1
            return run(*args)

        return counted


def engine_for(path: str, **overrides: object) -> InferenceEngine:
    return InferenceEngine(EngineConfig(model=path, block_size=4, num_kv_blocks=128, **overrides))


def stack_of(engine: InferenceEngine) -> object:
    """The decoder stack the engine's runners get from its backend (built once per model)."""
    return engine.loaded.backend.decoder_stack(engine.model)


@pytest.mark.parametrize("kind", ["llama", "qwen2", "qwen3", "llama_tied"])
@pytest.mark.parametrize(
    "overrides",
    [
        {"dtype": "bfloat16"},
        {"dtype": "bfloat16", "quantization": "int8"},
        {"dtype": "bfloat16", "kv_cache_dtype": "int8"},
        {"dtype": "float32"},
        {"dtype": "float32", "quantization": "int8"},  # the VNNI kernel on AMX hosts too
    ],
    ids=["bf16", "int8", "int8_kv", "fp32", "fp32_int8"],
)
def test_steps_through_the_stack_match_the_modules_exactly(tiny_model_dir, kind, overrides):
    engine = engine_for(tiny_model_dir(kind), **overrides)
    core = engine.new_core(num_kv_blocks=128, block_size=4)
    runner, bm = core.runner, core.block_manager
    assert runner.decoder_stack is not None
    spy = CountingStack(runner.decoder_stack)
    runner.decoder_stack = spy
    gen = torch.Generator().manual_seed(0)
    lengths = [5, 9, 22]
    seqs = [
        Sequence(i, torch.randint(3, 300, (n,), generator=gen).tolist(), n, SamplingParams())
        for i, n in enumerate(lengths)
    ]
    # A small prefill step (each prompt but its last 3 tokens: every token a query of the
    # attention kernel), then decode steps (one token per sequence).
    for k, chunks in enumerate([[n - 3 for n in lengths], [1, 1, 1], [1, 1, 1], [1, 1, 1]]):
        batch = []
        for seq, n in zip(seqs, chunks, strict=True):
            bm.allocate(seq, n)
            batch.append(ScheduledSequence(seq, n))
        calls = spy.calls
        stacked = runner.compute_logits(batch, all_positions=True)
        # Up to the stack's row limit (without AMX, bf16 linears take 4 rows: the prefill step
        # then goes through the modules, and the comparison holds all the same).
        assert spy.calls == calls + (sum(chunks) <= spy.max_rows)
        assert spy.calls >= k  # at least every decode step went through the stack
        runner.decoder_stack = None  # the same step again, module by module (K/V rewritten alike)
        modules = runner.compute_logits(batch, all_positions=True)
        runner.decoder_stack = spy
        assert torch.equal(stacked, modules)
        for s in batch:
            s.seq.num_computed_tokens += s.num_new_tokens


def generate(
    engine: InferenceEngine, prompts: list[list[int]], n: int, stack: object | None = None
) -> list[list[int]]:
    """Greedy `n` tokens per prompt, all in one batch; `stack` in place of the runner's."""
    core = engine.new_core()
    if stack is not None:
        core.runner.decoder_stack = stack
    params = SamplingParams(max_new_tokens=n, temperature=0, ignore_eos=True)
    outputs: dict[str, list[int]] = {str(i): [] for i in range(len(prompts))}
    for rid, p in zip(outputs, prompts, strict=True):
        core.add_request(rid, p, params)
    for _ in range(4 * n):  # bounded: prefill then n - 1 decode steps
        if not core.has_unfinished():
            break
        for out in core.step():
            outputs[out.request_id].append(out.token_id)
    return list(outputs.values())


def test_more_rows_than_the_stack_takes_go_through_the_modules(tiny_model_dir):
    engine = engine_for(tiny_model_dir("llama"), dtype="bfloat16")
    spy = CountingStack(stack_of(engine), max_rows=1)
    alone = generate(engine, [[5, 6, 7]], 3, spy)
    assert spy.calls == 2  # one sequence: its two decode steps through the stack
    together = generate(engine, [[5, 6, 7], [8, 9]], 3, spy)
    assert spy.calls == 2  # two rows per decode step: the modules
    assert together[0] == alone[0]


def test_large_prefill_steps_go_through_the_modules(tiny_model_dir):
    engine = engine_for(tiny_model_dir("llama"), dtype="bfloat16")
    stack = stack_of(engine)
    # The stack's limit is its linears' (AMX: 1,024 rows); 128 here keeps the prompt short.
    spy = CountingStack(stack, max_rows=min(stack.max_rows, 128))
    generate(engine, [list(range(3, 153))], 3, spy)  # 150 prompt tokens: more than it takes
    assert spy.calls == 2  # the decode steps only
    generate(engine, [list(range(3, 23))], 3, spy)  # a 20-token prompt: its prefill too, where
    # the linears take 20 rows (AMX: 1,024; without it, bf16 takes 4 and the prefill the modules)
    assert spy.calls == 2 + 2 + (20 <= spy.max_rows)


@pytest.mark.parametrize(
    "kind,overrides",
    [("llama", {"enforce_eager": True}), ("gpt2", {})],
    ids=["enforce-eager", "not-llama"],
)
def test_no_stack_where_it_does_not_apply(tiny_model_dir, kind, overrides):
    engine = engine_for(tiny_model_dir(kind), dtype="bfloat16", **overrides)
    assert engine.new_core().runner.decoder_stack is None
    (out,) = generate(engine, [[5, 6, 7]], 4)
    assert len(out) == 4


def test_the_stack_refuses_tokens_and_positions_outside_its_tables(tiny_model_dir):
    """The stack looks up a step's embeddings and rotary rows itself: an id past the vocabulary
    or a position past the tables is an error naming it, never a read outside them."""
    engine = engine_for(tiny_model_dir("llama"), dtype="bfloat16")
    before = generate(engine, [[5, 6, 7]], 3)
    stack = stack_of(engine).stack
    cos, sin = engine.model.rotary.tables(torch.bfloat16)
    vocab = engine.model.model.embed_tokens.weight.shape[0]
    caches: list[list[torch.Tensor]] = [[], [], [], []]  # not reached
    zero = torch.zeros(1, dtype=torch.long)
    indices = [zero, torch.zeros(1, 1, dtype=torch.long), zero]  # slots, tables, lengths
    ok = torch.tensor([3])
    with pytest.raises(RuntimeError, match=f"token index {vocab} out of range"):
        stack.forward(torch.tensor([vocab]), ok, cos, sin, *caches, *indices)
    with pytest.raises(RuntimeError, match="token index -1 out of range"):
        stack.forward(torch.tensor([-1]), ok, cos, sin, *caches, *indices)
    with pytest.raises(RuntimeError, match=f"position index {cos.shape[0]} out of range"):
        stack.forward(ok, torch.tensor([cos.shape[0]]), cos, sin, *caches, *indices)
    # Each refusal was raised inside the stack's parallel region: the next steps run as before.
    assert generate(engine, [[5, 6, 7]], 3) == before


@pytest.mark.skipif(
    torch.get_num_threads() < 2 or len(os.sched_getaffinity(0)) < 2, reason="one CPU here"
)
@pytest.mark.parametrize(
    "overrides",
    [{"dtype": "bfloat16"}, {"dtype": "bfloat16", "quantization": "int8"}],
    ids=["bf16", "int8"],
)
def test_one_region_gives_the_same_logits_as_one_thread(tiny_model_dir, overrides):
    """With two threads a step's layers run in one parallel region (`in_one_region`, the other
    threads waiting for each loop); with one, on this thread alone. Every output element is
    computed by one thread either way, so the logits are the same bit for bit; so are they where a
    step of 16 rows or more cuts each thread's share into pieces that either thread may take.
    (Short prompts: from 256 keys, a step whose tasks cannot balance the threads merges its
    attention's parts, whose rounding depends on the thread count.) Where bf16's linears stop
    at `SMALL_BATCH_ROWS` (CPUs without AVX512-BF16: the stack takes steps of up to 4 rows),
    steps of those rows."""
    engine = engine_for(tiny_model_dir("llama"), **overrides)
    spy = CountingStack(stack_of(engine))
    prompts = [list(range(5, 12)), list(range(40, 46)), list(range(10, 30))]
    if spy.max_rows >= 16:
        assert spy.stack.stack.one_region_rows >= 16  # the linears are kernels of ours
        steps = ([2, 1, 3], [4, 4, 8], [1, 1, 1])  # 6 rows, 16 (8 pieces a share), 3
    else:
        assert spy.max_rows == SMALL_BATCH_ROWS and overrides == {"dtype": "bfloat16"}
        steps = ([2, 1, 1], [1, 1, 2], [1, 1, 1])

    def logits() -> list[torch.Tensor]:
        core = engine.new_core(num_kv_blocks=128, block_size=4)
        runner, bm = core.runner, core.block_manager
        runner.decoder_stack = spy
        seqs = [Sequence(i, p, len(p), SamplingParams()) for i, p in enumerate(prompts)]
        out = []
        for chunks in steps:
            batch = []
            for seq, n in zip(seqs, chunks, strict=True):
                bm.allocate(seq, n)
                batch.append(ScheduledSequence(seq, n))
            out.append(runner.compute_logits(batch, all_positions=True))
            for s in batch:
                s.seq.num_computed_tokens += s.num_new_tokens
        return out

    in_region = logits()
    assert spy.calls == len(steps)  # every step went through the stack
    with torch_threads(1):
        alone = logits()
    for a, b in zip(in_region, alone, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("threads", [2, 3])
def test_one_long_sequence_splits_its_keys_and_decodes_as_the_reference(
    tiny_model_dir, tmp_path, threads
):
    """One sequence past 256 keys: its 2 KV heads cannot balance 2 or 3 threads, so each decode
    step's attention cuts their keys into one run per thread and merges the parts
    (`paged_attention.cpp`), inside the stack's region: its logits in fp32 are the reference
    attention backend's."""
    path = shutil.copytree(tiny_model_dir("llama"), tmp_path / "llama_1k")
    config = json.loads((path / "config.json").read_text())
    config["max_position_embeddings"] = 1024  # the tiny model's 256 leaves no room past 256
    (path / "config.json").write_text(json.dumps(config))
    prompt = [3 + (i * 37) % 290 for i in range(300)]

    def logits(engine: InferenceEngine, stack: CountingStack | None) -> list[torch.Tensor]:
        core = engine.new_core()
        runner, bm = core.runner, core.block_manager
        if stack is not None:
            runner.decoder_stack = stack
        seq = Sequence(0, prompt + [7, 11, 13], len(prompt), SamplingParams())
        out = []
        for n in (len(prompt), 1, 1, 1):  # the prompt, then three decode steps
            bm.allocate(seq, n)
            batch = [ScheduledSequence(seq, n)]
            out.append(runner.compute_logits(batch, all_positions=True)[-1])
            seq.num_computed_tokens += n
        return out

    with torch_threads(threads):
        kernel = engine_for(str(path), dtype="float32")
        spy = CountingStack(stack_of(kernel))
        split = logits(kernel, spy)
    assert spy.calls >= 3  # the decode steps went through the stack
    reference = logits(engine_for(str(path), dtype="float32", attention_backend="reference"), None)
    for a, b in zip(split, reference, strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_one_region_rows_are_those_of_its_own_kernels():
    """A step runs in one region only up to the rows where every linear is a kernel of ours:
    aten's, MKL's or oneDNN's loops would run on one thread in there."""
    kernels = load_cpu_kernels()
    hidden, heads, head_dim, inter = 64, 4, 16, 32
    gen = torch.Generator().manual_seed(0)

    def linear(kind: str, n: int, k: int, rows: int) -> object:
        if kind == "int8":
            weight = torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=gen)
            return kernels.DecodeLinear("int8", weight, torch.rand(n), None, kernel_rows=rows)
        return kernels.DecodeLinear("dense", torch.randn(n, k, generator=gen), None, None)

    def stack(kinds: list[str], rows: int = 4) -> object:
        shapes = [((heads + 2 * 2) * head_dim, hidden), (hidden, hidden), (2 * inter, hidden)]
        shapes.append((hidden, inter))
        linears = [linear(kind, n, k, rows) for kind, (n, k) in zip(kinds, shapes, strict=True)]
        norm = torch.ones(hidden)
        layer = kernels.DecodeLayer(norm, norm, *linears)
        embedding = torch.randn(100, hidden, generator=gen)
        return kernels.DecodeStack(embedding, [layer], norm, 1e-6, heads, 2, head_dim, 0.25)

    assert stack(["int8"] * 4, rows=4).one_region_rows == 4
    assert stack(["int8"] * 4, rows=9).one_region_rows == 9
    assert stack(["int8", "int8", "dense", "int8"]).one_region_rows == 0
