"""prompt_logprobs (and top-N) vs log_softmax of transformers' forward, under prefix cache hits,
chunked prefill, odd block sizes, n>1 and preemption."""
import sys, math
from common import *
import torch.nn.functional as F
from roseinfer import LLM, SamplingParams
kind = sys.argv[1] if len(sys.argv) > 1 else "llama"
hf = hf_model(kind); V = hf.config.vocab_size
base = rand_prompt(V, 120, 31)
P = [base[:37], base[:48], base[:120], rand_prompt(V, 5, 32), base[:16], base]
CONFIGS = {"default": {}, "chunk16_bs5": dict(max_num_batched_tokens=16, block_size=5),
           "eager_bs1": dict(enforce_eager=True, block_size=1), "preempt": dict(num_kv_blocks=16, block_size=8, max_num_batched_tokens=32)}
worst = 0.0; npos = 0; bad = []
for cname, cfg in CONFIGS.items():
    llm = LLM(model_dir(kind), dtype="float32", **cfg)
    # warm the prefix cache with the longest prompt first
    llm.generate([base], SamplingParams(max_tokens=2, temperature=0), use_tqdm=False)
    for n in (1, 3):
        sp = SamplingParams(max_tokens=20, temperature=0.9, seed=5, n=n, prompt_logprobs=5, logprobs=3, ignore_eos=True)
        outs = llm.generate(P, sp, use_tqdm=False)
        for p, o in zip(P, outs):
            ref = F.log_softmax(hf_logits(hf, p), -1)
            plp = o.prompt_logprobs
            if plp[0] is not None or len(plp) != len(p): bad.append((cname, n, "shape", len(plp), len(p)))
            for j in range(1, len(p)):
                d = plp[j]; r = ref[j - 1]; npos += 1
                if p[j] not in d: bad.append((cname, n, len(p), j, "token missing")); continue
                top = r.topk(5).indices.tolist()
                diff = max(abs(v.logprob - float(r[k])) for k, v in d.items())
                rank = int((r > r[p[j]]).sum()) + 1
                worst = max(worst, diff)
                if diff > 1e-4 or set(top) - set(d) or d[p[j]].rank != rank:
                    bad.append((cname, n, len(p), j, diff, d[p[j]].rank, rank))
            # sampled-token logprobs (raw) for each choice
            for co in o.outputs:
                g = list(co.token_ids)
                full = F.log_softmax(hf_logits(hf, p + g)[len(p) - 1:-1], -1)
                for t in range(len(g)):
                    diff = abs(co.logprobs[t][g[t]].logprob - float(full[t, g[t]])); worst = max(worst, diff)
                    if diff > 1e-4: bad.append((cname, n, "gen", t, diff))
                cum = sum(co.logprobs[t][g[t]].logprob for t in range(len(g)))
                if abs(cum - co.cumulative_logprob) > 1e-3: bad.append(("cum", cum, co.cumulative_logprob))
        print(cname, n, "bad so far", len(bad), "cached", [o.num_cached_tokens for o in outs], flush=True)
print(f"kind={kind} prompt positions={npos} worst diff={worst:.2e} mismatches={len(bad)}")
for b in bad[:20]: print("BAD", b)
