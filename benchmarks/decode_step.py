"""Decode-step time of the linear-layer strategies, interleaved in one process (ratios are what count).

    .venv/bin/python benchmarks/decode_step.py --batch-size 1
    .venv/bin/python benchmarks/decode_step.py --batch-size 32

eager: the plain path (`--enforce-eager --attention-backend reference`); reference-attention:
the default with the plain PyTorch attention; onednn-linears: the default with oneDNN for every
linear (no C++ decode linear); module-calls: the default with each layer's kernels called
from the PyTorch modules instead of the C++ decoder stack; default: oneDNN-prepacked bf16
weights for prefill, the C++ `amx_linear` for up to 32 rows (`small_batch_linear` for up to 4
where the CPU has no AMX), the C++ decode-attention kernel, a decode step's layers in one C++
call (`roseinfer/kernels/decode_stack.cpp`); int8-eager: the
plain path with aten's weight-only int8 matmul; int8: the default with the C++ int8 linear
(`--quantization int8`: AMX, VNNI or the vector kernel, as `roseinfer.backends.cpu_linear` picks). Each engine holds `batch` sequences that have prefilled a 70-token
prompt; the step time is the median over interleaved decode steps.
"""

from __future__ import annotations

import argparse

from decoding import decoding_core, interleaved_step_medians

from roseinfer.backends.cpu_linear import KernelPackedLinear
from roseinfer.engine import InferenceEngine

VARIANTS = {
    "eager": {"enforce_eager": True, "attention_backend": "reference"},
    "reference-attention": {"attention_backend": "reference"},
    "onednn-linears": {},  # the default with every linear on oneDNN, even at few rows
    "module-calls": {},  # the default with each layer's kernels called from the PyTorch modules
    "default": {},
    "int8-eager": {"quantization": "int8", "enforce_eager": True, "attention_backend": "reference"},
    "int8": {"quantization": "int8"},
}


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--model", default="smollm2")
    args = parser.parse_args()
    cores = {}
    for name, overrides in VARIANTS.items():
        engine = InferenceEngine(model=args.model, dtype="bfloat16", **overrides)
        if name == "onednn-linears":
            for module in engine.model.modules():
                if isinstance(module, KernelPackedLinear):
                    module.kernel_rows = 0
        cores[name] = decoding_core(engine, args.batch_size)
        if name in ("onednn-linears", "module-calls"):
            cores[name].runner.decoder_stack = None
    for name, step in interleaved_step_medians(cores, args.steps).items():
        print(
            f"batch {args.batch_size} {name}: step p50 {step * 1000:.1f} ms ({args.batch_size / step:.0f} tok/s)"
        )


if __name__ == "__main__":
    main()
