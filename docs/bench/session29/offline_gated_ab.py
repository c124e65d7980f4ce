"""bench throughput's workload through two offline LLMs in one process, in turns: SiLU·mul in
the gate_up linear's epilogue (fused) against the separate pass (`gated_layout` forced off when
the second one loads). Output tok/s per run.

    PYTHONPATH=. .venv/bin/python docs/bench/session29/offline_gated_ab.py [int8] [ROUNDS]
"""
import argparse
import sys
import time

import roseinfer.backends.cpu_linear as cpu_linear
from roseinfer.bench.throughput import DEFAULTS, make_workload
from roseinfer.config import SamplingParams
from roseinfer.llm import LLM

int8 = "int8" in sys.argv[1:]
rounds = int(sys.argv[-1]) if sys.argv[-1].isdigit() else 3
kw = {"quantization": "int8", "kv_cache_dtype": "int8"} if int8 else {}
fused = LLM(model="smollm2", **kw)
gated_layout = cpu_linear.gated_layout
cpu_linear.gated_layout = lambda linear: False
separate = LLM(model="smollm2", **kw)
cpu_linear.gated_layout = gated_layout
args = argparse.Namespace(seed=0, **DEFAULTS)
reqs = make_workload(args, fused.tokenizer.vocab_size, fused.tokenizer.special_token_ids)


def params(n: int) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)


out_tokens = sum(r.output_len for r in reqs)
for llm in (fused, separate):  # warm-up, as bench throughput
    llm.generate([r.prompt_token_ids[:16] for r in reqs[:1]], params(8), use_tqdm=False)
for r in range(rounds):
    for name, llm in (("separate", separate), ("fused", fused))[:: 1 if r % 2 else -1]:
        llm.reset_prefix_cache()
        start = time.perf_counter()
        llm.generate(
            [q.prompt_token_ids for q in reqs], [params(q.output_len) for q in reqs], use_tqdm=False
        )
        dt = time.perf_counter() - start
        print(f"round {r + 1} {name}: {out_tokens / dt:.1f} output tok/s ({dt:.2f} s)", flush=True)
