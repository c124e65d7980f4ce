"""One-row int8 decode steps at 70-170 tokens of context, for `perf record` (60 cores of 100 steps).

    perf record -D 9000 -F 4999 -g -o perf.data .venv/bin/python docs/bench/session28/perf_loop.py int8 60
    perf report -i perf.data --no-children --sort dso / --sort sym
"""
import os
import sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
engine = InferenceEngine(model="smollm2", **opts)
time.sleep(0.1)
for r in range(int(sys.argv[2])):
    core = decoding_core(engine, 1, context=70, max_new_tokens=110)
    for _ in range(100): core.step()
