"""What each token of context costs a decode step: the default engine at one batch size over
several context lengths, interleaved in one process. The slope is the attention's share (its
K/V reads grow with the context); the intercept is the rest of the step (linears, LM head,
norms, Python), which the context does not change.

    .venv/bin/python benchmarks/context_cost.py --batch-size 32
"""

from __future__ import annotations

import argparse
import statistics

from decoding import decoding_core, interleaved_step_medians

from roseinfer.engine import InferenceEngine


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--contexts", default="8,70,134,200,300")
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    contexts = [int(c) for c in args.contexts.split(",")]
    engine = InferenceEngine(dtype="bfloat16")
    cores = {
        c: decoding_core(engine, args.batch_size, c, kv_cache_memory=0.5, max_new_tokens=500)
        for c in contexts
    }
    steps = {c: s * 1000 for c, s in interleaved_step_medians(cores, args.steps).items()}
    for c, ms in steps.items():
        print(f"batch {args.batch_size}, context {c}+: step p50 {ms:.2f} ms")
    # Least-squares line through (context, step time).
    mean_c = statistics.fmean(contexts)
    mean_t = statistics.fmean(steps.values())
    slope = sum((c - mean_c) * (t - mean_t) for c, t in steps.items()) / sum(
        (c - mean_c) ** 2 for c in contexts
    )
    kv_bytes = 30 * 2 * 3 * 64 * 2  # SmolLM2: layers, K and V, KV heads, head_dim, bf16
    print(
        f"per context token: {slope * 1000:.1f} µs per step ({slope * 1000 / args.batch_size:.2f} µs "
        f"per sequence-token, {kv_bytes * args.batch_size / (slope * 1e-3) / 1e9:.1f} GB/s of K/V); "
        f"intercept {mean_t - slope * mean_c:.2f} ms"
    )


if __name__ == "__main__":
    main()
