from common import *
from roseinfer.compat import InferenceEngine
from roseinfer import SamplingParams
from roseinfer.config import EngineConfig
t=time.time()
eng = InferenceEngine(EngineConfig(model=M, dtype="float32", num_kv_blocks=64))
ids = eng.encode_prompt("The capital of France is")
base = eng.generate_ids(ids, SamplingParams(temperature=0, max_tokens=12))
print("base", base, repr(eng.tokenizer.decode(base)))
llm = eng.llm
ref = llm.generate([ids], SamplingParams(temperature=0, max_tokens=12), use_tqdm=False)[0].outputs[0]
print("LLM ", ref.token_ids, repr(ref.text))
# pick a stop string from the middle of the output text
txt = ref.text
stop = txt[len(txt)//2: len(txt)//2+3]
print("stop string", repr(stop))
sp = SamplingParams(temperature=0, max_tokens=12, stop=[stop])
print("LLM  stop:", llm.generate([ids], sp, use_tqdm=False)[0].outputs[0].token_ids)
trial("generate_ids stop", lambda: eng.generate_ids(ids, sp))
trial("generate_ids n=3", lambda: eng.generate_ids(ids, SamplingParams(temperature=0, max_tokens=4, n=3)))
trial("generate_ids logprobs", lambda: eng.generate_ids(ids, SamplingParams(temperature=0, max_tokens=4, logprobs=2, prompt_logprobs=2)))
s = eng.new_session(SamplingParams(temperature=0, max_tokens=12, stop=[stop], n=2, logprobs=3))
toks = list(s.iter_tokens(ids))
print("session iter with stop/n/logprobs:", toks, "attrs:", [a for a in vars(s) if 'log' in a])
print("time", time.time()-t)
