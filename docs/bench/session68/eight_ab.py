"""Eight ~2,000-token prompts at once, 32 tokens each, output tok/s, configurations in turns in
one engine. A configuration is a value of ROSE_ROW_SPLIT, which a build with `git apply
docs/bench/session68/row_split_env.patch` reads as its row-split threshold (the committed kernel
has the constant 512).

    .venv/bin/python docs/bench/session68/eight_ab.py bf16|int8 ROUNDS 999999,512 [BUDGET]
"""

import collections
import os
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant = sys.argv[1]
rounds = int(sys.argv[2])
configs = sys.argv[3].split(",")
budget = int(sys.argv[4]) if len(sys.argv) > 4 else 512
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=2.0, max_num_batched_tokens=budget, **kv)
params = SamplingParams(max_tokens=32, temperature=0, ignore_eos=True)
res = collections.defaultdict(list)
for r in range(rounds + 1):
    for ci, c in enumerate(configs):
        os.environ["ROSE_ROW_SPLIT"] = c
        s = time.perf_counter()
        for i in range(8):
            core.add_request(
                f"r{r}-{c}-{i}",
                [100 + (r * 131 + ci * 977 + i * 17 + j) % 5000 for j in range(2000)],
                params,
            )
        done = 0
        while done < 8:
            done += sum(o.finished for o in core.step())
        if r:
            res[c].append(256 / (time.perf_counter() - s))
print(
    quant,
    f"budget {budget}",
    "  ".join(
        f"split>={c}: {statistics.median(v):.1f} tok/s (q {sorted(v)[len(v) // 4]:.1f}-{sorted(v)[3 * len(v) // 4]:.1f})"
        for c, v in res.items()
    ),
)
