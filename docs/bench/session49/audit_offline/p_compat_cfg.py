from common import *
from roseinfer.compat import InferenceEngine, OnlineScheduler, OfflineScheduler, SchedulerManager
from roseinfer.config import EngineConfig
from roseinfer import SamplingParams
eng = InferenceEngine(EngineConfig(model=M, dtype="float32", num_kv_blocks=64, max_num_seqs=8))
on = OnlineScheduler(eng, max_batch_size=2, use_prefix_cache=False)
print("online max_num_seqs", on.core.config.max_num_seqs, "prefix", on.core.config.enable_prefix_cache)
trial("online both names", lambda: OnlineScheduler(eng, max_batch_size=2, max_num_seqs=3))
trial("online unknown kw", lambda: OnlineScheduler(eng, max_batch=2))
trial("online dtype differs", lambda: OnlineScheduler(eng, dtype="bfloat16"))
m = SchedulerManager(eng, EngineConfig(max_num_seqs=64), start_thread=False)
print("manager with config max_num_seqs=64 over engine of 8 ->", m.core.config.max_num_seqs)
m2 = SchedulerManager(eng, EngineConfig(max_num_seqs=4), start_thread=False)
print("manager with config max_num_seqs=4 ->", m2.core.config.max_num_seqs)
m3 = SchedulerManager(eng, EngineConfig(model="/other/path", max_num_seqs=4), start_thread=False) if False else None
trial("manager config model differs", lambda: SchedulerManager(eng, EngineConfig(model="/elsewhere"), start_thread=False))
trial("manager stream_interval=0", lambda: SchedulerManager(eng, stream_interval=0, start_thread=False))
trial("add_request both", lambda: on.add_request("hi", prompt_token_ids=[1,2]))
trial("add_request params+kw", lambda: on.add_request("hi", params=SamplingParams(), temperature=0.5))
trial("seed_params unknown kw", lambda: on.add_request("hi", temprature=0.5))
trial("abort bad reason", lambda: on.abort_request(0, "nope"))
# session api
s = eng.new_session(SamplingParams(temperature=0, max_tokens=3))
trial("set_generation_config do_sample='yes'", lambda: s.set_generation_config(3, 1.0, 0, 1.0, "yes", True))
trial("prefill 2 rows", lambda: s.prefill(__import__('torch').tensor([[1,2],[3,4]])))
trial("decode_step before prefill", lambda: eng.new_session(SamplingParams()).decode_step(1))
trial("generate_batch str", lambda: eng.generate_batch("abc"))
print("generate seeds args:", repr(eng.generate("Hello", 4, 0.7, 40, 0.9, True, False, 5)), "== greedy", repr(eng.generate("Hello", 4)))
