"""One request of an 800-token prompt (the audit model) with prompt_logprobs 20 and max_tokens 1,
offline: its time, and a cProfile of it (the steps that compute the prompt's logprobs).
   cd /tmp && PYTHONPATH=<tree> python plp_prof.py"""
import time, cProfile, pstats
from roseinfer import LLM, SamplingParams
llm = LLM(model="/tmp/s47/audit/tinysmol", dtype="float32", num_kv_blocks=2048)
prompt = " ".join(f"w{i}" for i in range(400))
p = SamplingParams(max_tokens=1, prompt_logprobs=20)
llm.generate(prompt, p, use_tqdm=False)
t = time.time(); llm.generate(prompt + " x", p, use_tqdm=False); print("generate", time.time() - t)
cProfile.run("llm.generate(prompt + ' y', p, use_tqdm=False)", "/tmp/s48/plp.out")
pstats.Stats("/tmp/s48/plp.out").sort_stats("cumulative").print_stats(25)
