"""Where one long prompt's prefill goes, by layer kind (`benchmarks/step_breakdown.py`'s
wall-clock wrappers around the modules' calls), at each `--max-num-batched-tokens` of CHUNKS:
the prompt's steps timed from its arrival to its first token, ROUNDS times, the median kept.

    .venv/bin/python docs/bench/session65/prefill_breakdown.py 2000 512,1024,2048 3
"""

import collections
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends import CpuBackend, cpu_attention, cpu_linear
from roseinfer.engine import InferenceEngine
from roseinfer.layers import activation, norm, sampler

prompt_len, chunks, rounds = int(sys.argv[1]), sys.argv[2].split(","), int(sys.argv[3])
spent: collections.Counter[str] = collections.Counter()


def timed(cls: type, method: str, key: str) -> None:
    inner = getattr(cls, method)

    def wrapper(*a, **kw):
        start = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            spent[key] += time.perf_counter() - start

    setattr(cls, method, wrapper)


engine = InferenceEngine(model="smollm2", dtype="bfloat16")
model_cls = type(engine.model)
for cls, method, key in [
    (cpu_linear.KernelPackedLinear, "forward", "linear"),
    (cpu_linear.KernelPackedLinear, "silu_mul", "linear"),
    (cpu_linear.KernelDpbf16Linear, "forward", "linear"),
    (cpu_linear.KernelDpbf16Linear, "silu_mul", "linear"),
    (cpu_attention.KernelPagedAttention, "forward", "attention"),
    (norm.RMSNorm, "forward", "norm"),
    (activation.SiluAndMul, "forward", "silu*mul"),
    (CpuBackend, "rotary", "rotary"),
    (sampler.Sampler, "__call__", "sampling"),
    (model_cls, "forward", "model forward"),
]:
    timed(cls, method, key)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
for chunk in chunks:
    core = engine.new_core(max_num_batched_tokens=int(chunk), kv_cache_memory=0.5)
    results = []
    for r in range(rounds + 1):  # the first round warms up
        prompt = [100 + (r * 7 + i) % 1000 for i in range(prompt_len)]  # no prefix-cache hit
        spent.clear()
        start = time.perf_counter()
        core.add_request(f"{chunk}-{r}", prompt, params)
        while not any(out.finished for out in core.step()):
            pass
        total = time.perf_counter() - start
        if r:
            results.append((total, dict(spent)))
    total, parts = sorted(results, key=lambda x: x[0])[len(results) // 2]
    print(
        f"{prompt_len} tokens, chunks of {chunk}: {total * 1e3:.0f} ms "
        f"(rounds {', '.join(f'{t * 1e3:.0f}' for t, _ in results)})"
    )
    for key, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {key:14s} {seconds * 1e3:7.1f} ms")
