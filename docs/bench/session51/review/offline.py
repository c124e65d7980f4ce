"""Offline LLM with odd generation_config.json files."""
from roseinfer import LLM, SamplingParams
R = "/tmp/s51/review"
# 1. max_new_tokens beyond the context (2048): LLM.generate without params
llm = LLM(f"{R}/m_big", dtype="float32", num_kv_blocks=64)
print("default_params.max_tokens", llm.default_params.max_tokens)
try:
    out = llm.generate("Hello", use_tqdm=False)
    print("generate OK", len(out[0].outputs[0].token_ids), out[0].outputs[0].finish_reason)
except Exception as e:
    print("generate RAISE", type(e).__name__, e)
try:
    out = llm.chat([{"role": "user", "content": "Hi"}], use_tqdm=False)
    print("chat OK", len(out[0].outputs[0].token_ids))
except Exception as e:
    print("chat RAISE", type(e).__name__, e)
# 2. a file no request could send, under generation_config="none"
for gc in ("auto", "none"):
    try:
        LLM(f"{R}/m_badtop", dtype="float32", num_kv_blocks=16, generation_config=gc)
        print(gc, "loads")
    except Exception as e:
        print(gc, "RAISE", type(e).__name__, e)
