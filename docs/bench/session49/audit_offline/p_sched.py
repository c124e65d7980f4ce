from common import *
from roseinfer.compat import InferenceEngine, OnlineScheduler, OfflineScheduler, SchedulerManager
from roseinfer import SamplingParams
from roseinfer.config import EngineConfig
eng = InferenceEngine(EngineConfig(model=M, dtype="float32", num_kv_blocks=64))
P = "The capital of France is"
ids = eng.encode_prompt(P)
ref = eng.llm.generate([ids], SamplingParams(temperature=0, max_tokens=12), use_tqdm=False)[0].outputs[0]
stop = ref.text[len(ref.text)//2: len(ref.text)//2+3]
print("LLM text:", repr(ref.text), "stop:", repr(stop))
on = OnlineScheduler(eng)
r1 = on.add_request(P, params=SamplingParams(temperature=0, max_tokens=12, stop=[stop]))
r2 = on.add_request(P, params=SamplingParams(temperature=1.0, seed=1, max_tokens=4, n=3, logprobs=2))
for _ in range(40):
    if not on.has_unfinished(): break
    on.step()
print("online stop resp:", repr(on.pop_response(r1)[len(P):]))
print("online n=3 ids:", on.get_generated_ids(r2))
st = on.processor.states[str(r2)]
print("  (internally computed choices:", [c.token_ids for c in st.choices], ")")
off = OfflineScheduler(eng)
a = off.add_request(P, params=SamplingParams(temperature=0, max_tokens=12, stop=[stop]))
b = off.add_request(P, params=SamplingParams(temperature=1.0, seed=1, max_tokens=4, n=3))
res = off.run()
print("offline stop:", repr(res[a][len(P):]))
print("offline n=3:", repr(res[b][len(P):]))
# SchedulerManager seed args
m = SchedulerManager(eng)
rid = m.add_request(P, 12, 0.0)
print("manager:", repr("".join(m.stream_text(rid, timeout=30))))
m.shutdown()
