from roseinfer import EngineConfig, SamplingParams, SchedulerManager
from roseinfer.engine import InferenceEngine, InferenceSession, OfflineScheduler, OnlineScheduler
cfg = EngineConfig(model="/tmp/s47/audit/tinysmol", dtype="float32")
eng = InferenceEngine(cfg)
a = eng.generate("hello", max_new_tokens=5)
b = eng.generate_batch(["hello", "x"], max_new_tokens=5)
c = "".join(eng.stream_generate("hello", max_new_tokens=5))
print("generate", repr(a), b[0] == a, c == a)
off = OfflineScheduler(eng)
rid = off.add_request("hello", max_new_tokens=5)
res = off.run(); print("offline", res, getattr(off, "errors", "NO errors attr"))
on = OnlineScheduler(eng)
r = on.add_request("hello", max_new_tokens=5)
n = 0
while on.has_unfinished() and n < 100: on.step(); n += 1
print("online", on.is_finished(r), repr(on.pop_response(r)))
for bad in [dict(params=SamplingParams(), max_new_tokens=3), dict(params=SamplingParams(n=2)), dict(params=SamplingParams(logprobs=1)), dict(prompt_token_ids=[1, 2])]:
    try:
        on.add_request("hello", **bad); print("ACCEPTED", bad)
    except ValueError as e: print("ValueError", list(bad), "->", e)
try: OnlineScheduler(eng, max_batch_size=2, max_num_seqs=3); print("ACCEPTED both names")
except (ValueError, TypeError) as e: print("both names ->", type(e).__name__, e)
try: eng.new_core(dtype="bfloat16"); print("ACCEPTED load field")
except ValueError as e: print("new_core dtype ->", e)
try: eng.generate_ids(eng.encode_prompt("hi"), SamplingParams(max_tokens=3, stop=["x"])); print("ACCEPTED stop in session")
except ValueError as e: print("generate_ids stop ->", e)
s = InferenceSession(eng)
print("session methods", all(hasattr(s, m) for m in ("prefill", "decode_step", "step_once")))
m = SchedulerManager(eng, EngineConfig(max_num_seqs=4))
rid = m.add_request("hello", max_new_tokens=5)
print("manager", repr("".join(m.stream_text(rid, timeout=60))))
m.shutdown()
try: SchedulerManager(eng, max_batch_size=2, config=EngineConfig(max_num_seqs=3)); print("ACCEPTED")
except ValueError as e: print("mgr both ->", e)
