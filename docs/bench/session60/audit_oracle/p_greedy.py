"""Greedy parity sweep: every family x engine config, batched prompts of very different lengths."""
import sys, time, itertools
from common import *
from roseinfer import LLM, SamplingParams

kinds = sys.argv[1].split(",") if len(sys.argv) > 1 else KINDS
NEW = int(sys.argv[2]) if len(sys.argv) > 2 else 40
CONFIGS = {
    "default": {},
    "eager": dict(enforce_eager=True),
    "reference_attn": dict(attention_backend="reference"),
    "chunk16_bs16": dict(max_num_batched_tokens=16),
    "chunk24_bs5": dict(max_num_batched_tokens=24, block_size=5),
    "bs1": dict(block_size=1),
    "bs7_eager": dict(block_size=7, enforce_eager=True),
    "preempt": dict(num_kv_blocks=24, block_size=16, max_num_batched_tokens=64),
    "preempt_bs4": dict(num_kv_blocks=80, block_size=4),
    "noprefix": dict(enable_prefix_cache=False, max_num_batched_tokens=32),
    "maxseqs1": dict(max_num_seqs=1),
}
if len(sys.argv) > 3: CONFIGS = {k: CONFIGS[k] for k in sys.argv[3].split(",")}
tot_cases = tot_tok = 0
fails = []
for kind in kinds:
    hf = hf_model(kind)
    V = hf.config.vocab_size
    base = rand_prompt(V, 300, 1)
    prompts = [rand_prompt(V, 3, 2), rand_prompt(V, 17, 3), rand_prompt(V, 130, 4), base[:250],
               base[:37], base[:48], base[:5]]  # shares prefix with base (mid-block, boundary)
    ref = [hf_greedy(hf, p, NEW) for p in prompts]
    for name, cfg in CONFIGS.items():
        t = time.time()
        llm = LLM(model_dir(kind), dtype="float32", **cfg)
        from conftest import record_preemptions
        pre = record_preemptions(llm)
        sp = SamplingParams(max_tokens=NEW, temperature=0, ignore_eos=True)
        # alone first (fills prefix cache), then batched
        alone = [llm.generate([p], sp, use_tqdm=False)[0].outputs[0].token_ids for p in prompts[:2]]
        outs = llm.generate(prompts, sp, use_tqdm=False)
        got = [list(o.outputs[0].token_ids) for o in outs]
        got_alone = [list(a) for a in alone]
        # second batch again (prefix cache full hits)
        outs2 = llm.generate(prompts[::-1], sp, use_tqdm=False)[::-1]
        got2 = [list(o.outputs[0].token_ids) for o in outs2]
        bad = []
        for label, g in [("batched", got), ("alone", got_alone), ("again", got2)]:
            for i, (a, b) in enumerate(zip(g, ref)):
                tot_cases += 1; tot_tok += len(b)
                if a != b:
                    gap = tie_gap(hf, prompts[i], a, b)
                    bad.append((label, i, len(prompts[i]), gap, (outs if label=="batched" else outs2)[i].outputs[0].finish_reason if label!="alone" else ""))
        print(f"{kind:10s} {name:15s} {'OK' if not bad else 'DIFF'} {bad} preempt={len(pre)} ({time.time()-t:.1f}s)", flush=True)
        fails += [(kind, name, b) for b in bad]
        del llm
print("cases", tot_cases, "tokens", tot_tok, "fails", len(fails))
for f in fails: print("FAIL", f)
