"""Session 40: each layer's KV cache stored KV head by KV head (the engine's allocation since this
session) against block by block (the storage before it: one contiguous [num_blocks, KVH,
block_size, D]), two engines of one model in one process, in turns. The block-by-block engine's
caches are copied to contiguous tensors before it runs anything (the kernels take either
layout). Cases:
    offline ROUNDS [int8]   bench throughput's workload (1,000 requests, their blocks reused as
                            they come and go), output tok/s per run
    decode BATCH CONTEXT STEPS [int8]   BATCH sequences of CONTEXT-token prompts admitted at
                            once, then their decode steps in turns: median step
    PYTHONPATH=. .venv/bin/python docs/bench/session40/storage_ab.py offline 2
    PYTHONPATH=. .venv/bin/python docs/bench/session40/storage_ab.py decode 32 134 300
    PYTHONPATH=. .venv/bin/python docs/bench/session40/storage_ab.py decode 8 2000 100
"""
import argparse
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from decoding import decoding_core  # noqa: E402

from roseinfer.bench.throughput import DEFAULTS, make_workload  # noqa: E402
from roseinfer.config import SamplingParams  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.layers.kv_cache import KVCache, LayerCache  # noqa: E402
from roseinfer.llm import LLM  # noqa: E402


def by_blocks(kv: KVCache) -> None:
    """The cache's layers as contiguous [num_blocks, KVH, block_size, D] copies (empty caches)."""
    def c(t):
        return None if t is None else t.contiguous()
    kv.layers = [LayerCache(c(x.k), c(x.v), c(x.k_scale), c(x.v_scale)) for x in kv.layers]
    kv.stack_args = (
        [x.k for x in kv.layers],
        [x.v for x in kv.layers],
        [s for x in kv.layers if (s := x.k_scale) is not None],
        [s for x in kv.layers if (s := x.v_scale) is not None],
    )


int8 = "int8" in sys.argv
kw = {"quantization": "int8", "kv_cache_dtype": "int8"} if int8 else {"dtype": "bfloat16"}
case = sys.argv[1]
if case == "offline":
    rounds = int(sys.argv[2])
    heads, blocks = LLM(model="smollm2", **kw), LLM(model="smollm2", **kw)
    assert not heads.engine.runner.kv_cache.layers[0].k.is_contiguous()
    by_blocks(blocks.engine.runner.kv_cache)
    args = argparse.Namespace(seed=0, **DEFAULTS)
    reqs = make_workload(args, heads.tokenizer.vocab_size, heads.tokenizer.special_token_ids)

    def params(n: int) -> SamplingParams:
        return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)

    out_tokens = sum(r.output_len for r in reqs)
    for llm in (heads, blocks):
        llm.generate([r.prompt_token_ids[:16] for r in reqs[:1]], params(8), use_tqdm=False)
    for r in range(rounds):
        for name, llm in (("blocks", blocks), ("heads", heads))[:: 1 if r % 2 else -1]:
            llm.reset_prefix_cache()
            start = time.perf_counter()
            llm.generate([q.prompt_token_ids for q in reqs], [params(q.output_len) for q in reqs],
                         use_tqdm=False)  # fmt: skip
            dt = time.perf_counter() - start
            print(f"round {r + 1} {name}: {out_tokens / dt:.1f} output tok/s ({dt:.2f} s)",
                  flush=True)  # fmt: skip
else:
    batch, context, steps = (int(x) for x in sys.argv[2:5])
    engine = InferenceEngine(model="smollm2", **{k: v for k, v in kw.items() if k != "kv_cache_dtype"})
    kv = "int8" if int8 else "auto"
    cores = {}
    for name in ("heads", "blocks"):
        if name == "blocks":  # convert the cache before decoding_core's prefill writes it
            new_core = engine.new_core

            def converted(**kwargs):
                core = new_core(**kwargs)
                by_blocks(core.runner.kv_cache)
                return core

            engine.new_core = converted
        cores[name] = decoding_core(engine, batch, context=context, kv_cache_dtype=kv,
                                    max_new_tokens=steps + 20)  # fmt: skip
    assert cores["blocks"].runner.kv_cache.layers[0].k.is_contiguous()
    assert not cores["heads"].runner.kv_cache.layers[0].k.is_contiguous()
    times = {name: [] for name in cores}
    for _ in range(steps):
        for name, core in cores.items():
            start = time.perf_counter()
            core.step()
            times[name].append(time.perf_counter() - start)
    h, b = statistics.median(times["heads"]), statistics.median(times["blocks"])
    ratio = statistics.median(x / y for x, y in zip(times["heads"], times["blocks"]))
    print(f"{'int8' if int8 else 'bf16'} batch {batch} context {context}: heads {h * 1e3:.2f} ms, "
          f"blocks {b * 1e3:.2f} ms, median per-step ratio heads/blocks {ratio:.3f}")  # fmt: skip
