"""Garbage collections during bench throughput's workload (bf16, offline LLM): count and time per
generation, via gc.callbacks."""
import argparse, gc, sys, time, collections
from roseinfer.bench.throughput import make_workload, DEFAULTS
from roseinfer.config import SamplingParams
from roseinfer.llm import LLM
llm = LLM(model="smollm2")
args = argparse.Namespace(seed=0, **DEFAULTS)
reqs = make_workload(args, llm.tokenizer.vocab_size, llm.tokenizer.special_token_ids)
def params(n): return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)
llm.generate([r.prompt_token_ids[:16] for r in reqs[:1]], params(8), use_tqdm=False)
llm.reset_prefix_cache()
stats = collections.defaultdict(lambda: [0, 0.0]); start = {}
def cb(phase, info):
    if phase == "start": start["t"] = time.perf_counter()
    else:
        s = stats[info["generation"]]; s[0] += 1; s[1] += time.perf_counter() - start["t"]
gc.callbacks.append(cb)
print("tracked objects before:", len(gc.get_objects()))
t = time.perf_counter()
llm.generate([r.prompt_token_ids for r in reqs], [params(r.output_len) for r in reqs], use_tqdm=False)
dt = time.perf_counter() - t
gc.callbacks.remove(cb)
print(f"generate {dt:.2f} s; collections: " + ", ".join(f"gen{g}: {n} in {s*1e3:.1f} ms" for g, (n, s) in sorted(stats.items())))
