"""Where a decode step's wall time goes, by layer kind, timed around each module call.

torch.profiler does not see the C++ kernels (they are pybind calls, not ATen ops), so this
wraps the layer classes' forward methods with wall-clock timers instead. The decode steps run
through the modules (the C++ decoder stack, which calls the same kernels without them, is
turned off here: `decode_step.py`'s module-calls vs default shows what it saves):

    .venv/bin/python benchmarks/step_breakdown.py --batch-size 32 --context 134
    .venv/bin/python benchmarks/step_breakdown.py --batch-size 1 --quantization int8
    .venv/bin/python benchmarks/step_breakdown.py --batch-size 48 --dtype float32

"linear" includes the LM head, which is also shown alone. Each sequence has a `--context`-token
prompt; the step time is the median of `--steps` decode steps with every sequence decoding.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time

from decoding import decoding_core

from roseinfer.backends import CpuBackend, TorchBackend, cpu_attention, cpu_linear
from roseinfer.engine import InferenceEngine
from roseinfer.layers import activation, attention, linear, norm, sampler


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=134)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--quantization", default="none")
    parser.add_argument("--kv-cache-dtype", default="auto")
    parser.add_argument("--enforce-eager", action="store_true")
    parser.add_argument("--attention-backend", default="auto")
    args = parser.parse_args()
    engine = InferenceEngine(
        dtype=args.dtype,
        quantization=args.quantization,
        enforce_eager=args.enforce_eager,
        attention_backend=args.attention_backend,
    )
    # Room for the steps that prefill the batch (chunks of max_num_batched_tokens tokens, the
    # first sequences decoding meanwhile) and the timed steps after them.
    prefill_steps = -(-args.batch_size * args.context // engine.config.max_num_batched_tokens)
    core = decoding_core(
        engine,
        args.batch_size,
        args.context,
        max_new_tokens=prefill_steps + args.steps + 8,
        kv_cache_dtype=args.kv_cache_dtype,
    )
    core.runner.decoder_stack = None

    spent: collections.Counter[str] = collections.Counter()

    def timed(cls: type, method: str, key: str) -> None:
        inner = getattr(cls, method)

        def wrapper(*a, **kw):
            start = time.perf_counter()
            try:
                return inner(*a, **kw)
            finally:
                spent[key] += time.perf_counter() - start

        static = isinstance(cls.__dict__.get(method), staticmethod)
        setattr(cls, method, staticmethod(wrapper) if static else wrapper)

    model_cls = type(core.runner.model)
    for cls, method, key in [
        (linear.PackedLinear, "forward", "linear"),
        (linear.Int8Linear, "forward", "linear"),
        (cpu_linear.KernelPackedLinear, "forward", "linear"),
        (cpu_linear.KernelDpbf16Linear, "forward", "linear"),
        (cpu_linear.KernelDenseLinear, "forward", "linear"),
        (cpu_linear.KernelInt8Linear, "forward", "linear"),
        # (a gated projection's SiLU·mul in its epilogue: `gate_up_silu_mul`)
        (cpu_linear.KernelPackedLinear, "silu_mul", "linear"),
        (cpu_linear.KernelDpbf16Linear, "silu_mul", "linear"),
        (cpu_linear.KernelInt8Linear, "silu_mul", "linear"),
        (attention.ReferenceAttention, "forward", "attention"),
        (cpu_attention.KernelPagedAttention, "forward", "attention"),
        (norm.RMSNorm, "forward", "norm"),
        (activation.SiluAndMul, "forward", "silu*mul"),
        (CpuBackend, "rotary", "rotary"),
        (TorchBackend, "rotary", "rotary"),
        (sampler.Sampler, "__call__", "sampling"),
        (model_cls, "forward", "model forward"),
        (model_cls, "compute_logits", "LM head"),
    ]:
        timed(cls, method, key)
    steps = []
    for _ in range(args.steps):
        start = time.perf_counter()
        core.step()
        steps.append(time.perf_counter() - start)
    step_ms = statistics.median(steps) * 1000
    print(
        f"batch {args.batch_size}, context {args.context}+, {args.dtype}, "
        f"quantization {args.quantization}, KV cache {args.kv_cache_dtype}, "
        f"enforce_eager {args.enforce_eager}, attention {args.attention_backend}: "
        f"step p50 {step_ms:.1f} ms ({args.batch_size / step_ms * 1000:.0f} tok/s)"
    )
    for key, seconds in spent.most_common():
        print(f"  {key:14s} {seconds / args.steps * 1000:6.2f} ms/step")


if __name__ == "__main__":
    main()
