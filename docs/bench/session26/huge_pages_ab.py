"""Engines with the packed weights in 2 MB pages (this tree: "w") and without ("none": the same
code, the arena patched to keep the tensors as packed), loaded in one process, run in turns:
one-stream decode steps (bf16, int8) and bench throughput's workload.

    .venv/bin/python docs/bench/session26/huge_pages_ab.py bf16 4 none,w    (or int8)
"""
import argparse, statistics, sys, time, os
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
from roseinfer.layers.huge_pages import HugePageArena
from roseinfer.llm import LLM
from roseinfer.bench.throughput import make_workload, DEFAULTS, run_throughput

def build(huge, **kw):
    orig_copy = HugePageArena.copy
    if "w" not in huge:
        HugePageArena.copy = lambda self, t: t
    try:
        return LLM(model="smollm2", **kw)
    finally:
        HugePageArena.copy = orig_copy

mode = sys.argv[1]
kw = {"quantization": "int8"} if mode == "int8" else {}
llms = {v: build(v, **kw) for v in sys.argv[3].split(",")}
print(open("/proc/self/smaps_rollup").read().split("AnonHugePages:")[1].split("\n")[0].strip(), "in huge pages", flush=True)
args = argparse.Namespace(seed=0, **DEFAULTS)
first = next(iter(llms.values()))
reqs = make_workload(args, first.tokenizer.vocab_size, first.tokenizer.special_token_ids)
from roseinfer.config import SamplingParams
one = [reqs[0].prompt_token_ids[:70]]
for r in range(int(sys.argv[2])):
    line = []
    for name, llm in llms.items():
        t = time.perf_counter()
        out = llm.generate(one, SamplingParams(max_tokens=128, temperature=0, ignore_eos=True), use_tqdm=False)
        dt = time.perf_counter() - t
        line.append(f"{name} one stream {dt/128*1e3:.2f} ms/token")
    for name, llm in llms.items():
        res = run_throughput(llm, reqs, progress=False)
        line.append(f"{name} offline {res['output_throughput']:.1f} tok/s")
    print(" | ".join(line), flush=True)
