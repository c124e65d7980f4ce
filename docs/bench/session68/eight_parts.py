"""Eight ~2,000-token prompts at once (32 tokens each) in one engine, the first 32 steps' time
by kernel call and projection (wall-clock timers around the CPU backend's kernel calls and the
linear layers), three rounds. `warm` reads each projection's weights before its call (untimed):
what the weights' first read costs in a step.

    .venv/bin/python docs/bench/session68/eight_parts.py bf16|int8 [BUDGET] [warm]
"""

import collections
import gc
import resource
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends.cpu import CpuBackend
from roseinfer.backends.cpu_attention import KernelPagedAttention
from roseinfer.backends.cpu_linear import KernelInt8Linear, KernelPackedLinear
from roseinfer.engine import InferenceEngine

quant = sys.argv[1]
budget = int(sys.argv[2]) if len(sys.argv) > 2 else 512
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=2.0, max_num_batched_tokens=budget, **kv)
spent = collections.Counter()


class Proxy:
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        f = getattr(self.inner, name)
        if not callable(f) or name[0].isupper():
            return f

        def timed(*a, **k):
            s = time.perf_counter()
            y = f(*a, **k)
            spent[name] += time.perf_counter() - s
            return y

        return timed


seen = set()

for o in gc.get_objects():
    if isinstance(o, (KernelPagedAttention, CpuBackend)) and id(o) not in seen:
        seen.add(id(o))
        o.kernels = Proxy(o.kernels)
cls = KernelInt8Linear if quant == "int8" else KernelPackedLinear
names = {m: n.split(".")[-1] for n, m in engine.model.named_modules() if isinstance(m, cls)}


def timed(method):
    inner = getattr(cls, method)

    def w(self, x):
        if "warm" in sys.argv and x.shape[0] > 64:
            (self.tile_weight if self.tile_weight is not None else self.weight).view(-1)[::32].sum()
        s = time.perf_counter()
        y = inner(self, x)
        spent["lin:" + names.get(self, "?")] += time.perf_counter() - s
        return y

    setattr(cls, method, w)


timed("forward")
timed("silu_mul")
params = SamplingParams(max_tokens=32, temperature=0, ignore_eos=True)
for r in range(3):
    spent.clear()
    s = time.perf_counter()
    nsteps = 0
    stepsum = 0.0
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(8):
        core.add_request(
            f"r{r}-{i}", [100 + (r * 131 + i * 17 + j) % 5000 for j in range(2000)], params
        )
    done = 0
    while done < 8 and nsteps < 32:
        t0 = time.perf_counter()
        outs = core.step()
        stepsum += time.perf_counter() - t0
        nsteps += 1
        done += sum(o.finished for o in outs)
    parts = dict(spent)
    parts["faults_k"] = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 1e6
    while done < 8:
        done += sum(o.finished for o in core.step())
    print(
        f"{quant} round {r}: first 32 steps {1e3 * stepsum:.0f} ms; "
        + ", ".join(f"{k} {1e3 * v:.0f}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]))
    )
