"""Each SamplingParams field's effect on a greedy/seeded run of smollm2, and the output fields."""
import math
from roseinfer import LLM, SamplingParams, StructuredOutputs
llm = LLM("smollm2", dtype="float32")
tok = llm.tokenizer
P = "The capital of France is"
def gen(prompt=P, **kw):
    return llm.generate(prompt, SamplingParams(**kw), use_tqdm=False)[0]
base = gen(temperature=0, max_tokens=12)
print("greedy:", repr(base.text), base.token_ids)
# stop string
o = gen(temperature=0, max_tokens=12, stop=["\n"])
print("stop='\\n':", repr(o.text), o.token_ids, o.finish_reason, repr(o.outputs[0].stop_reason))
# stop token id (a normal token: '.')
dot = base.token_ids[1]
o = gen(temperature=0, max_tokens=12, stop_token_ids=[dot])
print(f"stop_token_ids=[{dot}] ({tok.token_text(dot)!r}):", repr(o.text), o.token_ids, o.finish_reason, o.outputs[0].stop_reason)
# EOS
eos = tok.end_token_id
print("eos id", eos, "model stop ids", llm.engine.stop_token_ids)
o = gen("<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n", temperature=0, max_tokens=40)
print("chat-ish:", repr(o.text), o.token_ids[-3:], o.finish_reason, o.outputs[0].stop_reason)
# logprobs
o = gen(temperature=0, max_tokens=3, logprobs=2)
c = o.outputs[0]
for tid, pos in zip(c.token_ids, c.logprobs):
    print("  pos", tid, {k: (round(v.logprob, 3), v.rank, v.decoded_token) for k, v in pos.items()}, "first key is sampled:", next(iter(pos)) == tid)
print("cumulative", c.cumulative_logprob, "sum", sum(p[t].logprob for t, p in zip(c.token_ids, c.logprobs)))
o = gen(temperature=0, max_tokens=2, logprobs=0)
print("logprobs=0 sizes", [len(p) for p in o.outputs[0].logprobs])
o = gen(temperature=0, max_tokens=2)
print("no logprobs:", o.outputs[0].logprobs, o.outputs[0].cumulative_logprob)
o = gen(temperature=0, max_tokens=1, prompt_logprobs=1)
print("prompt_logprobs len", len(o.prompt_logprobs), "prompt len", len(o.prompt_token_ids), "first", o.prompt_logprobs[0],
      "second keys", list(o.prompt_logprobs[1]), "prompt tok", o.prompt_token_ids[1])
o = gen(temperature=0, max_tokens=1, prompt_logprobs=0)
print("prompt_logprobs=0 sizes", [None if p is None else len(p) for p in o.prompt_logprobs])
# n + seed
o = gen(temperature=1.0, max_tokens=8, n=3, seed=7)
texts = [x.text for x in o.outputs]
print("n=3 seed=7:", texts, "distinct:", len(set(texts)) == 3, "indices", [x.index for x in o.outputs])
o2 = gen(temperature=1.0, max_tokens=8, n=1, seed=8)
print("choice 1 == seed 8 alone:", o2.text == texts[1])
o3 = gen(temperature=1.0, max_tokens=8, n=3, seed=7)
print("reproducible:", [x.text for x in o3.outputs] == texts)
# seeded in a batch == seeded alone
alone = gen(temperature=1.0, max_tokens=8, seed=123).text
batch = llm.generate(["Once upon a time", P, "Hello"], [SamplingParams(temperature=1.0, max_tokens=8), SamplingParams(temperature=1.0, max_tokens=8, seed=123), SamplingParams(temperature=1.0, max_tokens=8)], use_tqdm=False)
print("seed in batch == alone:", batch[1].text == alone)
# unseeded: two identical requests differ
b = llm.generate([P, P], SamplingParams(temperature=1.0, max_tokens=10), use_tqdm=False)
print("unseeded identical prompts differ:", b[0].text != b[1].text)
# truncation samplers equal greedy at extremes
for kw in ({"top_k": 1}, {"top_p": 1e-6}, {"min_p": 1.0}):
    print(kw, "== greedy:", gen(temperature=1.0, max_tokens=12, seed=1, **kw).token_ids == base.token_ids)
print("temperature 1 seed 1 differs from greedy:", gen(temperature=1.0, max_tokens=12, seed=1).token_ids != base.token_ids)
# logit_bias / allowed / bad_words
x = tok.encode(" banana", add_special_tokens=False)[0]
print("logit_bias +100 forces:", gen(temperature=0, max_tokens=3, logit_bias={x: 100}).token_ids, x)
print("allowed_token_ids:", gen(temperature=0, max_tokens=3, allowed_token_ids=[x, dot]).token_ids)
o = gen(temperature=0, max_tokens=12, bad_words=["Paris"])
print("bad_words Paris:", repr(o.text))
# penalties
rp = gen("one one one one one", temperature=0, max_tokens=8)
print("rep none:", repr(rp.text))
for kw in ({"repetition_penalty": 2.0}, {"presence_penalty": 2.0}, {"frequency_penalty": 2.0}):
    print(kw, repr(gen("one one one one one", temperature=0, max_tokens=8, **kw).text))
# min_tokens / ignore_eos
o = gen("<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n", temperature=0, max_tokens=40, min_tokens=30)
print("min_tokens=30:", len(o.token_ids), o.finish_reason)
o = gen("<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n", temperature=0, max_tokens=40, ignore_eos=True)
print("ignore_eos:", len(o.token_ids), o.finish_reason, repr(o.text[-60:]))
# structured outputs
print("regex:", repr(gen(temperature=0, max_tokens=10, structured_outputs=StructuredOutputs(regex="[0-9]{3}")).text))
print("choice:", repr(gen(temperature=0, max_tokens=10, structured_outputs=StructuredOutputs(choice=["Lyon", "Nice"])).text))
# num_cached_tokens / metrics
long = "word " * 100
gen(long, temperature=0, max_tokens=1); o = gen(long, temperature=0, max_tokens=1)
print("metrics", o.metrics, "hasattr num_cached_tokens:", hasattr(o, "num_cached_tokens"), "hasattr prompt:", hasattr(o, "prompt"))
