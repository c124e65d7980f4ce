"""bench throughput with PER_TOKEN_MAX_KEYS at several values, in turns."""
import argparse, sys, time
import roseinfer.backends.cpu_attention as ca
from roseinfer.bench.throughput import make_workload, DEFAULTS, run_throughput
from roseinfer.llm import LLM

kw = dict(model="smollm2")
if "int8" in sys.argv[1:]:
    kw.update(quantization="int8", kv_cache_dtype="int8")
llm = LLM(**kw)
args = argparse.Namespace(seed=0, **DEFAULTS)
reqs = make_workload(args, llm.tokenizer.vocab_size, llm.tokenizer.special_token_ids)
limits = [int(x) for x in sys.argv[1].split(",")]
for rnd in range(int(sys.argv[2]) if len(sys.argv) > 2 else 2):
    for lim in limits:
        ca.PER_TOKEN_MAX_KEYS = lim
        r = run_throughput(llm, reqs, progress=False)
        print(f"round {rnd} limit {lim}: {r['elapsed_s']:.2f} s, {r['output_throughput']:.1f} tok/s", flush=True)
