"""Many requests of n choices at once, offline (`LLM.generate`, SmolLM2-135M bf16, default
flags): 16 prompts of ~70 tokens (distinct) x n = 4, 32 tokens each, sampled: seconds, median
of ROUNDS (a new set of prompts each round). Run against a tree with PYTHONPATH=<tree>, not from
a checkout.   python n_batch.py ROUNDS"""
import statistics, sys, time

from roseinfer import LLM, SamplingParams

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
llm = LLM(model="smollm2", dtype="bfloat16")
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
times = []
for r in range(rounds + 1):
    prompts = [f"round {r} prompt {k}: " + " ".join(words[(i * 5 + k + r) % 12] for i in range(60))
               for k in range(16)]
    params = SamplingParams(n=4, max_tokens=32, temperature=0.8, seed=r, ignore_eos=True)
    t = time.perf_counter()
    outs = llm.generate(prompts, params, use_tqdm=False)
    if r:  # the first round warms up
        times.append(time.perf_counter() - t)
print(f"16 prompts x n=4 x 32 tokens: {statistics.median(times):.2f} s (median of {rounds}; "
      f"{', '.join(f'{x:.2f}' for x in times)}), {sum(len(c.token_ids) for o in outs for c in o.outputs)} tokens")
