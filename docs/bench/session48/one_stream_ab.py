"""One stream's decode step, offline (`LLM.generate`, SmolLM2-135M, one prompt, 256 greedy
tokens, ignore_eos), ms a token after the first: the tree on PYTHONPATH (not run from a
checkout), bf16 and int8, ROUNDS rounds (median). A check that the session's sampler and
scheduler changes cost the plain path nothing.   python one_stream_ab.py ROUNDS"""
import statistics, sys, time

from roseinfer import LLM, SamplingParams

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for mode, kw in (("bf16", {"dtype": "bfloat16"}), ("int8", {"quantization": "int8"})):
    llm = LLM(model="smollm2", **kw)
    params = SamplingParams(max_tokens=256, temperature=0, ignore_eos=True)
    llm.generate("Warm up the engine with a short prompt.", params, use_tqdm=False)
    per_token = []
    for r in range(rounds):
        t = time.perf_counter()
        (out,) = llm.generate(f"Round {r}: tell me a long story about a lighthouse.", params,
                              use_tqdm=False)
        per_token.append((time.perf_counter() - t) / len(out.outputs[0].token_ids) * 1e3)
    print(f"{mode}: {statistics.median(per_token):.3f} ms a token (median of {rounds}; "
          f"{', '.join(f'{x:.3f}' for x in per_token)})", flush=True)
    del llm
