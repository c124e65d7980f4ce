"""What each token of context costs a decode step: the default engine at one batch size over
several context lengths, interleaved in one process. The slope is the attention's share (its
K/V reads grow with the context); the intercept is the rest of the step (linears, LM head,
norms, Python), which the context does not change. `--kv-cache-dtypes auto,int8` interleaves
both caches too; `--quantization int8` runs the engine on int8 linears.

    .venv/bin/python benchmarks/context_cost.py --batch-size 32 [--kv-cache-dtypes auto,int8] [--quantization int8]
"""

from __future__ import annotations

import argparse
import statistics

from decoding import decoding_core, interleaved_step_medians

from roseinfer.engine import InferenceEngine

# SmolLM2's K/V bytes per token: layers x (K and V) x KV heads x row bytes
ROW_BYTES = {"auto": 64 * 2, "int8": 64 + 4}  # bf16; int8 values and an fp32 scale


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--contexts", default="8,70,134,200,300")
    parser.add_argument("--kv-cache-dtypes", default="auto")
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--quantization", default="none")
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    kv_dtypes = args.kv_cache_dtypes.split(",")
    engine = InferenceEngine(dtype="bfloat16", quantization=args.quantization)
    cores = {
        (kv, c): decoding_core(
            engine, args.batch_size, c, kv_cache_memory=0.5, max_new_tokens=500, kv_cache_dtype=kv
        )
        for kv in kv_dtypes
        for c in contexts
    }
    steps = {key: s * 1000 for key, s in interleaved_step_medians(cores, args.steps).items()}
    for (kv, c), ms in steps.items():
        print(f"batch {args.batch_size}, context {c}+, kv cache {kv}: step p50 {ms:.2f} ms")
    for kv in kv_dtypes:
        # Least-squares line through (context, step time).
        times = {c: steps[(kv, c)] for c in contexts}
        mean_c = statistics.fmean(contexts)
        mean_t = statistics.fmean(times.values())
        slope = sum((c - mean_c) * (t - mean_t) for c, t in times.items()) / sum(
            (c - mean_c) ** 2 for c in contexts
        )
        kv_bytes = 30 * 2 * 3 * ROW_BYTES[kv]
        print(
            f"kv cache {kv}: per context token {slope * 1000:.1f} µs per step "
            f"({slope * 1000 / args.batch_size:.2f} µs per sequence-token, "
            f"{kv_bytes * args.batch_size / (slope * 1e-3) / 1e9:.1f} GB/s of K/V); "
            f"intercept {mean_t - slope * mean_c:.2f} ms"
        )


if __name__ == "__main__":
    main()
