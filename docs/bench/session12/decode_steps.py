"""Decode-step medians of SmolLM2 in three modes (default dtype, bf16, int8) at several batch
sizes, the engines taking turns step by step. Session 12: the AVX2 paths of the C++ linears.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session12/decode_steps.py TAG 1,8,32
    docs/bench/session12/ab_steps.sh   # a base tree and this one, alternated, two rounds
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core, interleaved_step_medians  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

MODES = {"auto": {}, "bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}

tag = sys.argv[1]
for bs in [int(b) for b in sys.argv[2].split(",")]:
    cores = {n: decoding_core(InferenceEngine(model="smollm2", **o), bs) for n, o in MODES.items()}
    for n, s in interleaved_step_medians(cores, 20 if bs > 8 else 40).items():
        print(f"{tag} batch {bs} {n}: {s * 1000:.1f} ms ({bs / s:.0f} tok/s)", flush=True)
    del cores
