"""vLLM-isms that fail loudly but cryptically or differ quietly: stop=None (vLLM's default),
default max_tokens, RequestOutput.prompt / num_cached_tokens, CompletionOutput.finished(),
stop_reason when an EOS id is listed in stop_token_ids, prompt+max_tokens past max_model_len."""
from roseinfer import LLM, SamplingParams
for kw in ({"stop": None}, {"stop_token_ids": None}, {"bad_words": None}):
    try:
        SamplingParams(**kw); print("ACCEPTED", kw)
    except Exception as e:
        print(f"{type(e).__name__} for {kw}: {e!s}  <- names no field")
print("SamplingParams().max_tokens =", SamplingParams().max_tokens, "(vLLM: 16)")
llm = LLM("smollm2", dtype="float32", max_model_len=64)
C = "<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n"
out = llm.generate(C, SamplingParams(temperature=0, max_tokens=40, stop_token_ids=[2]), use_tqdm=False)[0]
print("EOS (2) listed in stop_token_ids -> stop_reason", out.outputs[0].stop_reason, "(vLLM V1: None, EOS is checked first)")
try:
    print("len(generate(no params)) =", len(llm.generate("Once upon a time", use_tqdm=False)[0].token_ids), "tokens (vLLM default: 16)")
except Exception as e:
    print("generate('Once upon a time') with no sampling_params, max_model_len=64 ->", type(e).__name__, e)
big = LLM("smollm2", dtype="float32", max_model_len=256)
print("len(generate(no params)) =", len(big.generate("Once upon a time", use_tqdm=False)[0].token_ids), "tokens (vLLM default: 16)")
for expr in ("out.prompt", "out.num_cached_tokens", "out.outputs[0].finished()"):
    try:
        print(expr, "=", eval(expr))
    except Exception as e:
        print(expr, "->", type(e).__name__, e)
# vLLM V1 caps at max_model_len (scheduler _check_stop: num_tokens >= max_model_len -> length);
# roseinfer refuses the whole batch
try:
    r = llm.generate([C, list(range(100, 160))], SamplingParams(temperature=0, max_tokens=16), use_tqdm=False)
    print("batch ok", [o.finish_reason for o in r])
except Exception as e:
    print("batch with one prompt whose prompt+max_tokens > max_model_len ->", type(e).__name__, e)
