"""SchedulerManager(engine, config): a field of `config` set to its default value is read as
'not given' and the engine's own setting is kept (README documents this)."""
from roseinfer import InferenceEngine, EngineConfig, SchedulerManager, OnlineScheduler
eng = InferenceEngine(EngineConfig(model="smollm2", dtype="float32", max_model_len=256, kv_cache_dtype="int8", seed=5, enable_prefix_cache=False))
m = SchedulerManager(eng, EngineConfig(kv_cache_dtype="auto", seed=0, enable_prefix_cache=True), start_thread=False)
c = m.core.config
print("asked kv_cache_dtype='auto', seed=0, enable_prefix_cache=True -> got", c.kv_cache_dtype, c.seed, c.enable_prefix_cache)
s = OnlineScheduler(eng, kv_cache_dtype="auto", seed=0, enable_prefix_cache=True)
c = s.core.config
print("OnlineScheduler(**overrides) same ->", c.kv_cache_dtype, c.seed, c.enable_prefix_cache)
m.shutdown()
