"""`benchmarks/int8_quality.py` with `amx_s8_linear` (x rounded per row, from 64 rows) kept for
some layer kinds only: the others get their rows in pieces of 60 (below the kernel's 64), so
they take the widened bf16 tiles. The C++ decoder stack is turned off (it calls the layers'
kernels itself, small prefill steps too), so that every step goes through these modules. Which
linears' inputs bear rounding per row?

    PYTHONPATH=benchmarks .venv/bin/python docs/bench/session72/s8_subsets_quality.py qkv,o [flags]
"""

import sys

import torch

from roseinfer.backends import cpu_linear
from roseinfer.engine.model_runner import ModelRunner

KINDS = {(960, 576): "qkv", (576, 576): "o", (3072, 576): "gate_up", (576, 1536): "down"}


def kind(layer: cpu_linear.KernelInt8Linear) -> str:
    return KINDS.get((layer.out_features, layer.vnni_qweight.shape[1] * 4), "lm_head")


def keep_s8_for(allow: set[str]) -> None:
    """The int8 layers of kinds outside `allow` get their rows in pieces of 60, and every
    ModelRunner made from now on runs without the C++ decoder stack."""
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


if __name__ == "__main__":
    allow = set(sys.argv.pop(1).split(","))
    keep_s8_for(allow)
    import int8_quality

    print(f"amx_s8_linear for: {sorted(allow)}")
    int8_quality.main()
