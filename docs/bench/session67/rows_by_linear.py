"""Where a 2,000-token prompt's bf16 linears go on an AMX CPU, by projection, with each
`KernelPackedLinear`'s `kernel_rows` (the AMX kernel up to it, oneDNN beyond) set between rounds:
1,024 for all (AMX_ROWS), 4,096 for all, or 4,096 for gate_up only (AMX_GATED_ROWS since
session 67); the prompt alone in one step (--lone-prefill-tokens), in turns in one engine; ms
from arrival to the first token and per projection (30 layers), medians of ROUNDS.

    .venv/bin/python docs/bench/session67/rows_by_linear.py 8
"""

import collections
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends.cpu_linear import KernelPackedLinear
from roseinfer.engine import InferenceEngine

rounds = int(sys.argv[1])
engine = InferenceEngine(model="smollm2", dtype="bfloat16")
core = engine.new_core(kv_cache_memory=0.5)
names = {
    m: name.split(".")[-1]
    for name, m in engine.model.named_modules()
    if isinstance(m, KernelPackedLinear)
}
spent: collections.Counter[str] = collections.Counter()


def timed(method: str) -> None:
    inner = getattr(KernelPackedLinear, method)
    suffix = "+silu" if method == "silu_mul" else ""

    def wrapper(self, x):
        start = time.perf_counter()
        y = inner(self, x)
        if x.shape[0] > 1:
            spent[names.get(self, "?") + suffix] += time.perf_counter() - start
        return y

    setattr(KernelPackedLinear, method, wrapper)


timed("forward")
timed("silu_mul")
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
configs = {"1024": 0, "4096": 300, "gated": 600}  # each its own prompts: no prefix-cache hit
results: dict[str, dict[str, list[float]]] = {c: collections.defaultdict(list) for c in configs}
for r in range(rounds + 1):  # the first round warms up
    for config, offset in configs.items():
        for m, name in names.items():
            gated_rows = 4096 if config != "1024" else 1024
            m.kernel_rows = (
                gated_rows if name == "gate_up_proj" else int(config.replace("gated", "1024"))
            )
        prompt = [100 + (r * 7 + offset + i) % 1000 for i in range(2000)]
        spent.clear()
        start = time.perf_counter()
        core.add_request(f"{config}-{r}", prompt, params)
        while not any(out.finished for out in core.step()):
            pass
        total = time.perf_counter() - start
        if r:
            results[config]["total"].append(total)
            for key, seconds in spent.items():
                results[config][key].append(seconds)
for config, parts in results.items():
    label = "up to 4096 for gate_up only" if config == "gated" else f"up to {config}"
    print(
        label + ": " + ", ".join(f"{k} {1e3 * statistics.median(v):.1f}" for k, v in parts.items())
    )
