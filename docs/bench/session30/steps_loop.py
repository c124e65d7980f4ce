"""A loop of one-row decode steps, for strace and perf: PYTHONPATH=. .venv/bin/python docs/bench/session30/steps_loop.py int8|bf16 STEPS"""
import sys, time
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]; n = int(sys.argv[2])
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=n + 100)
for _ in range(20): core.step()
t = time.perf_counter()
for _ in range(n): core.step()
print(f"{mode}: {(time.perf_counter() - t) / n * 1e3:.3f} ms/step")
