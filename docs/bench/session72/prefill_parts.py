"""A ~2,000-token prompt alone (one grown step), bf16 and int8 + int8 KV engines in one process in
turns: each layer kind's wall time inside the step (the layers' forward methods timed, keyed by
the module's name: qkv_proj, o_proj, gate_up_proj, down_proj, attention, norms, rotary), and the
whole time to the first token; medians over ROUNDS rounds.

    .venv/bin/python docs/bench/session72/prefill_parts.py ROUNDS
"""

import collections
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends import CpuBackend, cpu_attention, cpu_linear
from roseinfer.engine import InferenceEngine
from roseinfer.layers import norm

rounds = int(sys.argv[1])
names: dict[int, str] = {}
spent: collections.Counter = collections.Counter()


def timed(cls: type, method: str, key: str | None) -> None:
    inner = getattr(cls, method)

    def wrapper(self, *a, **kw):
        start = time.perf_counter()
        try:
            return inner(self, *a, **kw)
        finally:
            spent[key or names.get(id(self), cls.__name__)] += time.perf_counter() - start

    setattr(cls, method, wrapper)


for cls in (cpu_linear.KernelPackedLinear, cpu_linear.KernelDpbf16Linear,
            cpu_linear.KernelDenseLinear, cpu_linear.KernelInt8Linear):  # fmt: skip
    timed(cls, "forward", None)
    if hasattr(cls, "silu_mul"):
        timed(cls, "silu_mul", None)
timed(cpu_attention.KernelPagedAttention, "forward", "attention")
timed(norm.RMSNorm, "forward", "norm")
timed(CpuBackend, "rotary", "rotary")

cores = {}
for quant in ("bf16", "int8"):
    kw = {"quantization": "int8"} if quant == "int8" else {}
    kv = {"kv_cache_dtype": "int8"} if quant == "int8" else {}
    engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
    cores[quant] = engine.new_core(kv_cache_memory=0.5, **kv)
    for name, module in cores[quant].runner.model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        names[id(module)] = leaf
        for attr in vars(module).values():  # a layer's backend object behind the module
            if hasattr(attr, "forward") and not hasattr(attr, "named_modules"):
                names.setdefault(id(attr), leaf)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
parts: dict[str, collections.defaultdict] = {q: collections.defaultdict(list) for q in cores}
for r in range(rounds + 1):
    for qi, (quant, core) in enumerate(cores.items()):
        prompt = [100 + (r * 7 + qi * 301 + i) % 3000 for i in range(2000)]
        spent.clear()
        s = time.perf_counter()
        core.add_request(f"{r}", prompt, params)
        while not any(o.finish_reason for o in core.step()):
            pass
        total = time.perf_counter() - s
        if r:
            parts[quant]["first token"].append(total)
            for k, v in spent.items():
                parts[quant][k].append(v)
keys = sorted(
    set(parts["bf16"]) | set(parts["int8"]),
    key=lambda k: -statistics.median(parts["bf16"].get(k, [0])),
)
print(f"a ~2,000-token prompt alone, ms (medians of {rounds} rounds):   bf16   int8+kv8")
for k in keys:
    b, i = (1e3 * statistics.median(parts[q].get(k, [0])) for q in ("bf16", "int8"))
    print(f"  {k:24s} {b:8.1f} {i:8.1f}")
