"""The seeds' classes with sampling arguments: InferenceEngine.generate_ids / InferenceSession
and min_indent / stop_at_newline_after_ms (text rules the output processor applies);
seed_params' temperature/seed without do_sample."""
from roseinfer import InferenceEngine, EngineConfig, SamplingParams, LLM
eng = InferenceEngine(EngineConfig(model="smollm2", dtype="float32", max_model_len=256))
prompt = "def f(x):\n    if x:\n        return 1\n"
ids = eng.encode_prompt(prompt)
greedy = SamplingParams(temperature=0, max_tokens=30)
cut = SamplingParams(temperature=0, max_tokens=30, min_indent=4)
ref = eng.llm.generate([ids], greedy, use_tqdm=False)[0]
via_llm = eng.llm.generate([ids], cut, use_tqdm=False)[0]
print("LLM greedy      :", repr(ref.text), len(ref.token_ids))
print("LLM min_indent=4:", repr(via_llm.text), len(via_llm.token_ids), via_llm.finish_reason)
try:
    s = eng.generate_ids(ids, cut)
    print("generate_ids(min_indent=4): ACCEPTED,", len(s), "tokens; same as without it:", s == eng.generate_ids(ids, greedy),
          repr(eng.tokenizer.decode(s)))
except Exception as e:
    print("generate_ids(min_indent=4): RAISE", type(e).__name__, e)
try:
    s = eng.generate_ids(ids, SamplingParams(temperature=0, max_tokens=30, stop_at_newline_after_ms=0.001))
    print("generate_ids(stop_at_newline_after_ms=0.001): ACCEPTED,", len(s), "tokens")
except Exception as e:
    print("generate_ids(stop_at_newline_after_ms): RAISE", type(e).__name__, e)
# seed_params: sampling args without do_sample
g = eng.generate("Once upon a time", max_new_tokens=10)
t = eng.generate("Once upon a time", max_new_tokens=10, temperature=1.5, top_k=50, seed=3)
print("generate(temperature=1.5, top_k=50, seed=3) without do_sample == greedy:", g == t)
t2 = eng.generate("Once upon a time", max_new_tokens=10, temperature=1.5, seed=3, do_sample=True)
print("with do_sample=True differs:", g != t2)
