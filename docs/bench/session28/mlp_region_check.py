"""Greedy tokens of one prompt with the switch of `mlp_region_ab.patch` off and on (same tokens
expected), in a scratch worktree with the patch applied.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/mlp_region_check.py
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
from roseinfer import SamplingParams
k = load_cpu_kernels()
eng = InferenceEngine(model="smollm2", quantization="int8")
outs = []
for mode in (0, 1):
    k.set_ab_mode(mode)
    core = eng.new_core()
    core.add_request("a", list(range(100, 170)), SamplingParams(max_new_tokens=40, temperature=0, ignore_eos=True))
    toks = []
    while core.has_unfinished():
        for o in core.step(): toks.append(o.token_id)
    outs.append(toks)
print("same tokens:", outs[0] == outs[1], outs[0][:10], outs[1][:10])
