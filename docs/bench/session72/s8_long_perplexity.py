"""Perplexity over longer texts (the first 4,000 tokens of this repository's README.md and of
its BENCHMARKS.md, in 8 pieces of 1,000), bf16 against int8 with
`amx_s8_linear` kept for some layer kinds only (s8_subsets_quality.py's `keep_s8_for`: the
others' rows in pieces of 60), the decoder stack off; one configuration per process.

    PYTHONPATH=benchmarks .venv/bin/python docs/bench/session72/s8_long_perplexity.py bf16|KINDS
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # s8_subsets_quality beside it

import int8_quality  # noqa: E402
from s8_subsets_quality import keep_s8_for  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

which = sys.argv[1]
keep_s8_for(set(which.split(",")))

kw = {} if which == "bf16" else {"quantization": "int8"}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
ids = []
for path in ("README.md", "BENCHMARKS.md"):
    ids += engine.tokenizer.encode(open(path).read()[:20000])[:4000]
pieces = [ids[i : i + 1000] for i in range(0, 8000, 1000)]
nlls = [math.log(int8_quality.perplexity(engine, engine.tokenizer.decode(p))) for p in pieces]
print(
    f"{which}: perplexity {math.exp(sum(nlls) / len(nlls)):.4f} over {len(pieces)} pieces "
    f"(each: {' '.join(f'{math.exp(n):.3f}' for n in nlls)})"
)
