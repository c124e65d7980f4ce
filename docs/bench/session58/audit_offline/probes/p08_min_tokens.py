"""min_tokens at the boundary (vLLM: the stop token is masked while fewer than min_tokens tokens
precede it, so with min_tokens = k the output has >= k tokens before EOS)."""
from roseinfer import LLM, SamplingParams
llm = LLM("smollm2", dtype="float32")
C = "<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n"
g = llm.generate(C, SamplingParams(temperature=0, max_tokens=60), use_tqdm=False)[0]
L = len(g.token_ids)
print("greedy:", L, "tokens, last", g.token_ids[-1], g.finish_reason)
for k in (L - 1, L):
    m = llm.generate(C, SamplingParams(temperature=0, max_tokens=60, min_tokens=k), use_tqdm=False)[0]
    stops = [i for i, t in enumerate(m.token_ids) if t in llm.engine.stop_token_ids]
    print(f"min_tokens={k}: {len(m.token_ids)} tokens, first stop token at index {stops[:1]}, same as greedy: {m.token_ids == g.token_ids}")
