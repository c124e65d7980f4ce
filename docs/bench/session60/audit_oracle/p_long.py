"""Long greedy generations crossing many blocks, up to the context window (max_model_len), alone
and batched, small blocks + chunked prefill; and the finish at the context."""
from common import *
from roseinfer import LLM, SamplingParams
res = []
for kind in ["llama", "gpt2", "qwen3"]:
    hf = hf_model(kind); V = hf.config.vocab_size
    P = [rand_prompt(V, 20, 71), rand_prompt(V, 300, 72)]
    N = 600
    ref = [hf_greedy(hf, p, N) for p in P]
    for cname, cfg in {"default": {}, "bs5_chunk32": dict(block_size=5, max_num_batched_tokens=32), "mml": dict(max_model_len=640)}.items():
        llm = LLM(model_dir(kind), dtype="float32", **cfg)
        outs = llm.generate(P, SamplingParams(max_tokens=N, temperature=0, ignore_eos=True), use_tqdm=False)
        for i, o in enumerate(outs):
            g = list(o.outputs[0].token_ids)
            exp_len = N if "max_model_len" not in cfg else min(N, cfg["max_model_len"] - len(P[i]))
            ok = g == ref[i][:exp_len]
            res.append(ok)
            print(kind, cname, i, "len", len(g), "expected", exp_len, o.outputs[0].finish_reason, "OK" if ok else f"DIFF {tie_gap(hf, P[i], g, ref[i][:len(g)])}", flush=True)
print("long cases", len(res), "ok", sum(res))
