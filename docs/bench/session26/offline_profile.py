"""cProfile of `bench throughput`'s run (bf16; `int8`: int8 weights and cache), own time per call.

    PYTHONPATH=. .venv/bin/python docs/bench/session26/offline_profile.py
"""
import cProfile, pstats, sys, argparse
from roseinfer.bench.throughput import make_workload, DEFAULTS
from roseinfer.config import SamplingParams
from roseinfer.llm import LLM

kw = dict(model="smollm2")
if "int8" in sys.argv[1:]:
    kw.update(quantization="int8", kv_cache_dtype="int8")
llm = LLM(**kw)
args = argparse.Namespace(seed=0, **DEFAULTS)

reqs = make_workload(args, llm.tokenizer.vocab_size, llm.tokenizer.special_token_ids)
def params(n): return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True)
llm.generate([r.prompt_token_ids[:16] for r in reqs[:1]], params(8), use_tqdm=False)
llm.reset_prefix_cache()
prof = cProfile.Profile()
prof.enable()
llm.generate([r.prompt_token_ids for r in reqs], [params(r.output_len) for r in reqs], use_tqdm=False)
prof.disable()
stats = pstats.Stats(prof)
total = stats.total_tt
rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])
print(f"{total*1000:.0f} ms in all")
for (file, line, name), (_, calls, own, *_) in rows[:25]:
    where = name if file == "~" else f"{file.split('roseinfer/')[-1]}:{line} {name}"
    print(f"  {own*1000:7.0f} ms {own/total:6.1%}  {calls:6d} calls  {where}")
