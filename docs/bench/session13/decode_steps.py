"""Decode-step medians of SmolLM2 with an int8 KV cache (float32 and int8 weights) beside the
float32 cache, at several batch sizes and context lengths, the engines taking turns step by
step. Session 13: the int8 cache's AVX2 kernel.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session13/decode_steps.py TAG 1,32 70,500
    BASE=/work/wt-base docs/bench/session13/ab_steps.sh   # a base tree and this one, alternated
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core, interleaved_step_medians  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

# (engine options, cache dtype) per mode
MODES = {
    "fp32": ({}, "auto"),
    "fp32+kv8": ({}, "int8"),
    "int8": ({"quantization": "int8"}, "auto"),
    "int8+kv8": ({"quantization": "int8"}, "int8"),
}

tag = sys.argv[1]
engines = {n: InferenceEngine(model="smollm2", **o) for n, (o, _) in MODES.items()}
for context in [int(c) for c in sys.argv[3].split(",")]:
    for bs in [int(b) for b in sys.argv[2].split(",")]:
        cores = {
            # 1 GiB of cache: 32 float32 sequences of 500 tokens need 0.75 (0.25 would preempt).
            n: decoding_core(
                engines[n], bs, context=context, kv_cache_memory=1.0, kv_cache_dtype=kv
            )
            for n, (_, kv) in MODES.items()
        }
        for n, s in interleaved_step_medians(cores, 20 if bs > 8 else 40).items():
            print(
                f"{tag} context {context} batch {bs} {n}: {s * 1000:.1f} ms ({bs / s:.0f} tok/s)",
                flush=True,
            )
        del cores
