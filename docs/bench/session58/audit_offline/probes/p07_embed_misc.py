"""LLM.embed / PoolingParams, presence_penalty's effect, n with greedy, min_tokens boundary."""
import math
from roseinfer import LLM, SamplingParams, PoolingParams
llm = LLM("smollm2", dtype="float32")
e = llm.embed(["hello world"], use_tqdm=False)[0].outputs.embedding
print("norm (normalize default):", round(math.sqrt(sum(x * x for x in e)), 4))
e2 = llm.embed(["hello world"], PoolingParams(normalize=False), use_tqdm=False)[0].outputs.embedding
print("norm normalize=False:", round(math.sqrt(sum(x * x for x in e2)), 4))
t = llm.embed(["a b c d e f hello world"], truncate_prompt_tokens=2, use_tqdm=False)[0]
print("truncate_prompt_tokens=2 prompt ids:", t.prompt_token_ids, "same as 'hello world'?:", t.outputs.embedding == e)
for kw in ({"dimensions": 8}, {"truncate_prompt_tokens": 2}, {"use_activation": True}, {"activation": True}):
    try:
        PoolingParams(**kw); print("ACCEPTED PoolingParams", kw)
    except Exception as ex:
        print(type(ex).__name__, "PoolingParams", kw, ex)
# presence penalty acts on output tokens (logprobs_processed: the distribution drawn from)
P = "one one one one one"
base = llm.generate(P, SamplingParams(temperature=0, max_tokens=8, logprobs=0, logprobs_processed=True), use_tqdm=False)[0]
pen = llm.generate(P, SamplingParams(temperature=0, max_tokens=8, logprobs=0, logprobs_processed=True, presence_penalty=2.0), use_tqdm=False)[0]
print("tokens", base.token_ids, pen.token_ids)
# greedy processed logprob is 0 for the chosen token; use temperature 1 with top_k 0 and a seed instead
b = llm.generate(P, SamplingParams(temperature=1.0, max_tokens=6, seed=5, logprobs=3, logprobs_processed=True), use_tqdm=False)[0]
p = llm.generate([P], SamplingParams(temperature=1.0, max_tokens=6, seed=5, logprobs=3, logprobs_processed=True, presence_penalty=2.0), use_tqdm=False)[0]
print("no penalty :", b.token_ids, [round(d[t].logprob, 3) for t, d in zip(b.token_ids, b.outputs[0].logprobs)])
print("presence 2 :", p.token_ids, [round(d[t].logprob, 3) for t, d in zip(p.token_ids, p.outputs[0].logprobs)])
# n with greedy
o = llm.generate("The capital of France is", SamplingParams(temperature=0, max_tokens=6, n=3), use_tqdm=False)[0]
print("n=3 greedy:", [x.text for x in o.outputs])
# min_tokens boundary: a prompt whose greedy answer ends at EOS quickly
C = "<|im_start|>user\nReply with just the word yes.<|im_end|>\n<|im_start|>assistant\n"
g = llm.generate(C, SamplingParams(temperature=0, max_tokens=20), use_tqdm=False)[0]
print("greedy:", repr(g.text), g.token_ids, g.finish_reason)
k = len(g.token_ids)
m = llm.generate(C, SamplingParams(temperature=0, max_tokens=20, min_tokens=k), use_tqdm=False)[0]
print(f"min_tokens={k}:", repr(m.text), m.token_ids, m.finish_reason, "non-stop tokens:", sum(t not in llm.engine.stop_token_ids for t in m.token_ids))
