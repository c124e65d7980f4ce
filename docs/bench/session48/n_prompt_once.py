"""One request of n choices on a long prompt, offline (`LLM.generate`, SmolLM2-135M bf16, default
flags): seconds for the request and the prompt tokens the prefix cache served, by n, with and without
prompt_logprobs. Run against a tree with PYTHONPATH=<tree>.
   python n_prompt_once.py ROUNDS"""
import sys, time, statistics

from roseinfer import LLM, SamplingParams

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
llm = LLM(model="smollm2", dtype="bfloat16")
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
for n, plp in ((1, None), (8, None), (8, 1)):
    times = []
    for r in range(rounds):
        # a prompt of its own each round (nothing of it in the prefix cache)
        prompt = f"round {r} n {n} {plp}: " + " ".join(words[(i * 7 + r) % len(words)] for i in range(1000))
        params = SamplingParams(n=n, max_tokens=16, temperature=0.8, seed=r, ignore_eos=True, prompt_logprobs=plp)
        hits = llm.engine.block_manager.prefix_hits
        t = time.perf_counter()
        (out,) = llm.generate(prompt, params, use_tqdm=False)
        times.append(time.perf_counter() - t)
        served = llm.engine.block_manager.prefix_hits - hits
    print(f"n={n} prompt_logprobs={plp}: {len(out.prompt_token_ids)} prompt tokens, "
          f"{statistics.median(times):.2f} s (median of {rounds}; {', '.join(f'{x:.2f}' for x in times)}), "
          f"prefix cache served {served} tokens in the last round", flush=True)
