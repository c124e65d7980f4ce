"""`roseinfer bench throughput`'s default workload (64 prompts of 32-256 tokens, 32-128 greedy
tokens each) with prefill chunks attended through SDPA over their padded, gathered blocks (only
chunks of at most 32 tokens took the prefill kernel before session 16) or through the prefill
kernel (every chunk), in turns in one process.

    PYTHONPATH=. .venv/bin/python docs/bench/session16/offline_routing.py [ROUNDS] [MODES]

Run it in a checkout of b7066b5: the next commit sends every chunk to the kernel and drops the
limit this script switches.
"""

import argparse
import sys

import roseinfer.backends.cpu_attention as cpu_attention
from roseinfer.bench.throughput import DEFAULTS, make_workload, run_throughput
from roseinfer.llm import LLM

MODES = {
    "fp32": {},
    "bf16": {"dtype": "bfloat16"},
    "int8+kv8": {"quantization": "int8", "kv_cache_dtype": "int8"},
}
ROUTES = {"sdpa": 32, "kernel": 1 << 30}

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
modes = sys.argv[2].split(",") if len(sys.argv) > 2 else list(MODES)
llms = {n: LLM(model="smollm2", **MODES[n]) for n in modes}
workload = argparse.Namespace(seed=0, **DEFAULTS)
for r in range(rounds):
    for n, llm in llms.items():
        requests = make_workload(
            workload, llm.tokenizer.vocab_size, llm.tokenizer.special_token_ids
        )
        for route, limit in ROUTES.items():
            cpu_attention.PREFILL_KERNEL_MAX_QUERIES = limit
            res = run_throughput(llm, requests, progress=False)
            print(
                f"round {r + 1} {n} {route}: {res['output_throughput']:.1f} output tok/s "
                f"({res['elapsed_s']:.1f} s)",
                flush=True,
            )
