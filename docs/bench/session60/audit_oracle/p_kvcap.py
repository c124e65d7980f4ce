"""A request whose prompt + max_tokens exceeds the whole KV cache (num_kv_blocks*block_size)."""
from common import *
from roseinfer import LLM, SamplingParams
hf = hf_model("llama"); V = hf.config.vocab_size
for alone in (True, False):
    llm = LLM(model_dir("llama"), dtype="float32", num_kv_blocks=14, block_size=8)
    p = rand_prompt(V, 99, 23)
    ps = [p] if alone else [p, rand_prompt(V, 6, 21)]
    outs = llm.generate(ps, SamplingParams(max_tokens=40, temperature=0, ignore_eos=True), use_tqdm=False)
    o = outs[0].outputs[0]
    print("alone" if alone else "batched", "capacity", 14 * 8, "prompt", len(p), "max_tokens 40 -> got",
          len(o.token_ids), "finish", o.finish_reason, "stop_reason", o.stop_reason, "error", getattr(o, "error", None))
    print("  llm.config.max_model_len", llm.config.max_model_len)
