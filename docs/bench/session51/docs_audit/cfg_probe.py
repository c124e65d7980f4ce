from roseinfer import EngineConfig, LLM, SamplingParams
for bad in [dict(enable_prefix_cache=1), dict(seed=1.5), dict(kv_cache_memory=float("nan")), dict(max_batch_size=3)]:
    try: EngineConfig(**bad); print("ACCEPTED", bad)
    except (ValueError, TypeError) as e: print(type(e).__name__, bad, "->", e)
tpl = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}"
llm = LLM(model="/tmp/s47/audit/tinysmol", dtype="float32", chat_template=tpl)
print(repr(llm.tokenizer.decode(llm.encode_chat([{"role": "user", "content": "hi"}]))) if hasattr(llm, "tokenizer") else llm.encode_chat([{"role": "user", "content": "hi"}]))
try: LLM(loaded=llm.loaded if hasattr(llm, "loaded") else None, dtype="bfloat16"); print("ACCEPTED dtype differ")
except Exception as e: print(type(e).__name__, e)
