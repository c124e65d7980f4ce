"""A ~2,000-token prompt alone (one step), time to its first token, configurations in turns in
one engine: a value of ROSE_ROW_SPLIT (read by a build with `git apply
docs/bench/session68/row_split_env.patch`, as in eight_ab.py), `+amx` also sending bf16 qkv, o
and down to the AMX kernel at 2,000 rows.

    .venv/bin/python docs/bench/session68/lone_ab.py bf16|int8 ROUNDS 999999,512[,512+amx]
"""

import collections
import os
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends.cpu_linear import KernelPackedLinear
from roseinfer.engine import InferenceEngine

quant = sys.argv[1]
rounds = int(sys.argv[2])
configs = sys.argv[3].split(",")
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=0.5, **kv)
mods = [m for m in engine.model.modules() if isinstance(m, KernelPackedLinear)]
orig = {m: m.kernel_rows for m in mods}
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
res = collections.defaultdict(list)
for r in range(rounds + 1):
    for ci, c in enumerate(configs):
        os.environ["ROSE_ROW_SPLIT"] = c.split("+")[0]
        for m in mods:
            m.kernel_rows = 4096 if c.endswith("+amx") else orig[m]
        prompt = [100 + (r * 7 + ci * 301 + i) % 3000 for i in range(2000)]
        s = time.perf_counter()
        core.add_request(f"{r}-{c}", prompt, params)
        while not any(o.finished for o in core.step()):
            pass
        if r:
            res[c].append(time.perf_counter() - s)
print(
    quant,
    "  ".join(
        f"{c}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * sorted(v)[len(v) // 4]:.0f}-{1e3 * sorted(v)[3 * len(v) // 4]:.0f})"
        for c, v in res.items()
    ),
)
