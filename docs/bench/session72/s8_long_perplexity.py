"""Perplexity over longer texts (this repository's README.md and docs/ARCHITECTURE-style prose:
the first 8 pieces of ~1,000 tokens of README.md and BENCHMARKS.md), bf16 against int8 with
`amx_s8_linear` kept for some layer kinds only (as s8_subsets_quality.py: the others' rows in
pieces of 60), the decoder stack off; one configuration per process.

    PYTHONPATH=benchmarks .venv/bin/python docs/bench/session72/s8_long_perplexity.py bf16|KINDS
"""

import math
import sys

import torch

from roseinfer.backends import cpu_linear
from roseinfer.engine import InferenceEngine
from roseinfer.engine.model_runner import ModelRunner

which = sys.argv[1]
allow = set(which.split(","))
KINDS = {(960, 576): "qkv", (576, 576): "o", (3072, 576): "gate_up", (576, 1536): "down"}


def kind(layer: cpu_linear.KernelInt8Linear) -> str:
    return KINDS.get((layer.out_features, layer.vnni_qweight.shape[1] * 4), "lm_head")


for name in ("forward", "silu_mul"):
    inner = getattr(cpu_linear.KernelInt8Linear, name)

    def wrapped(self, x, _inner=inner):
        if kind(self) in allow or x.dim() != 2 or x.shape[0] < 64:
            return _inner(self, x)
        return torch.cat([_inner(self, p) for p in x.split(60)])

    setattr(cpu_linear.KernelInt8Linear, name, wrapped)
runner_init = ModelRunner.__init__


def without_stack(self, *a, **kw):
    runner_init(self, *a, **kw)
    self.decoder_stack = None


ModelRunner.__init__ = without_stack

import int8_quality  # noqa: E402

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
