from common import *
from roseinfer import SamplingParams
from roseinfer.sampling_params import StructuredOutputs
L = llm()
tok = L.tokenizer
P = "The capital of France is"
ids = L.encode(P)
def g(**kw):
    kw.setdefault("max_tokens", 8)
    return L.generate([ids], SamplingParams(**kw), use_tqdm=False)[0]
base = g(temperature=0).outputs[0]
print("greedy", base.token_ids, base.finish_reason)
# seed
a = [o.token_ids for o in g(temperature=1.0, seed=7, n=2).outputs]
b = [o.token_ids for o in g(temperature=1.0, seed=7, n=2).outputs]
print("seed reproducible:", a == b, "choices differ:", a[0] != a[1])
c = g(temperature=1.0, seed=8).outputs[0].token_ids
print("seed 8 choice0 == seed7 choice1 (seed+i rule):", c == a[1])
u1 = g(temperature=1.0).outputs[0].token_ids; u2 = g(temperature=1.0).outputs[0].token_ids
print("unseeded twice differ:", u1 != u2)
# top_k=1 is greedy
print("top_k=1 == greedy:", g(temperature=1.0, top_k=1, seed=3).outputs[0].token_ids == base.token_ids)
print("min_p=1 == greedy:", g(temperature=1.0, min_p=1.0, seed=3).outputs[0].token_ids == base.token_ids)
print("top_p tiny == greedy:", g(temperature=1.0, top_p=1e-6, seed=3).outputs[0].token_ids == base.token_ids)
# penalties
for kw in [dict(repetition_penalty=2.0), dict(presence_penalty=2.0), dict(frequency_penalty=2.0)]:
    o = g(temperature=0, **kw).outputs[0]
    print(kw, o.token_ids, "changed:", o.token_ids != base.token_ids)
# logit_bias / allowed / bad_words
o = g(temperature=0, logit_bias={100: 100}).outputs[0]; print("logit_bias 100->", o.token_ids)
o = g(temperature=0, allowed_token_ids=[100, 200]).outputs[0]; print("allowed", o.token_ids)
word = tok.decode([base.token_ids[2]]).strip()
o = g(temperature=0, bad_words=[word]).outputs[0]; print("bad_words", repr(word), o.token_ids, repr(o.text))
# stop_token_ids
o = g(temperature=0, stop_token_ids=[base.token_ids[2]]).outputs[0]; print("stop_token_ids", o.token_ids, o.finish_reason, o.stop_reason, repr(o.text))
# min_tokens + eos: use logit_bias to push eos
eos = tok.eos_token_id; print("eos", eos, "stop ids", L.engine.stop_token_ids)
o = g(temperature=0, logit_bias={eos: 100}).outputs[0]; print("eos forced", o.token_ids, o.finish_reason)
o = g(temperature=0, logit_bias={eos: 100}, min_tokens=3).outputs[0]; print("eos forced min_tokens=3", o.token_ids, o.finish_reason)
o = g(temperature=0, logit_bias={eos: 100}, ignore_eos=True, max_tokens=4).outputs[0]; print("ignore_eos", o.token_ids, o.finish_reason, repr(o.text))
# logprobs
r = g(temperature=0, logprobs=2, prompt_logprobs=1, max_tokens=3)
print("logprobs", [len(x) for x in r.outputs[0].logprobs], "prompt_lp", r.prompt_logprobs and len(r.prompt_logprobs), "cum", r.outputs[0].cumulative_logprob)
# structured
o = g(temperature=1.0, seed=1, max_tokens=20, structured_outputs=StructuredOutputs(regex="[ab]{3}")).outputs[0]; print("regex", repr(o.text), o.finish_reason)
o = g(temperature=1.0, seed=1, max_tokens=20, structured_outputs=StructuredOutputs(choice=["yes","no"])).outputs[0]; print("choice", repr(o.text), o.finish_reason)
o = g(temperature=1.0, seed=1, max_tokens=40, structured_outputs=StructuredOutputs(json={"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":False})).outputs[0]; print("json", repr(o.text), o.finish_reason)
# unknown fields
for k in ["skip_special_tokens", "include_stop_str_in_output", "detokenize", "truncate_prompt_tokens", "best_of", "spaces_between_special_tokens", "guided_json"]:
    trial(k, lambda: SamplingParams(**{k: 1}))
