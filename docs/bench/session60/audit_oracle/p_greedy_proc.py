"""Greedy (temperature 0) with penalties / bias / bad_words / min_tokens / allowed ids vs a
transformers loop with its logits processors, batched, under several engine configs."""
import sys
from common import *
from transformers.generation.logits_process import (
    RepetitionPenaltyLogitsProcessor, NoBadWordsLogitsProcessor, MinNewTokensLengthLogitsProcessor)
from roseinfer import LLM, SamplingParams
from roseinfer.engine.bad_words import bad_words_token_ids

kind = sys.argv[1] if len(sys.argv) > 1 else "llama"
hf = hf_model(kind); V = hf.config.vocab_size; EOS = hf.config.eos_token_id
N = 40

@torch.no_grad()
def ref_loop(prompt, c):
    gen = []
    bad = c.get("_bad_ids")
    for step in range(c.get("max_tokens", N)):
        inp = torch.tensor([prompt + gen])
        z = hf(inp).logits[:, -1].float()
        for t, b in (c.get("logit_bias") or {}).items(): z[0, t] += b
        if c.get("allowed_token_ids"):
            m = torch.full_like(z, float("-inf")); m[0, c["allowed_token_ids"]] = 0; z = z + m
        if bad: z = NoBadWordsLogitsProcessor([list(b) for b in bad], eos_token_id=None)(inp, z)
        if c.get("min_tokens"):
            stops = [EOS] + list(c.get("stop_token_ids") or [])
            z = MinNewTokensLengthLogitsProcessor(len(prompt), c["min_tokens"], stops)(inp, z)
        if c.get("repetition_penalty", 1.0) != 1.0:
            z = RepetitionPenaltyLogitsProcessor(c["repetition_penalty"])(inp, z)
        f, p = c.get("frequency_penalty", 0.0), c.get("presence_penalty", 0.0)
        if f or p:
            cnt = torch.bincount(torch.tensor(gen, dtype=torch.long), minlength=V).float() if gen else torch.zeros(V)
            z[0] -= f * cnt + p * (cnt > 0).float()
        tok = int(z[0].argmax()); gen.append(tok)
        if not c.get("ignore_eos") and tok == EOS: break
        if tok in (c.get("stop_token_ids") or []): break
    return gen

llm0 = LLM(model_dir(kind), dtype="float32")
tok = llm0.tokenizer
P = [rand_prompt(V, 6, 21), rand_prompt(V, 70, 22), rand_prompt(V, 33, 23) * 3]
# words that greedy output would produce: first token of each plain greedy continuation
plain = [hf_greedy(hf, p, N) for p in P]
w1 = tok.hf.decode([plain[0][2]]).strip() or "a"
w2 = tok.hf.decode(plain[1][5:7]).strip() or "ab"
CASES = {
  "rep1.5": dict(repetition_penalty=1.5),
  "rep0.8": dict(repetition_penalty=0.8),
  "freq1_pres0.5": dict(frequency_penalty=1.0, presence_penalty=0.5),
  "freq-0.5": dict(frequency_penalty=-0.5, repetition_penalty=1.1),
  "bias": dict(logit_bias={plain[0][0]: -100, plain[1][0]: -100, 17: 4.0}),
  "bias_rep": dict(logit_bias={17: 4.0, 18: 3.5}, repetition_penalty=2.0),
  "min_tokens": dict(min_tokens=7, logit_bias={EOS: 9.0}, ignore_eos=False),
  "min_tokens_stopid": dict(min_tokens=4, stop_token_ids=[plain[0][1], plain[1][1], plain[2][1]], ignore_eos=True),
  "allowed": dict(allowed_token_ids=list(range(40, 90)) + [EOS], repetition_penalty=1.2),
  "bad_words": dict(bad_words=[w1, w2]),
}
CONFIGS = {"default": {}, "eager_chunk16": dict(enforce_eager=True, max_num_batched_tokens=16),
           "preempt": dict(num_kv_blocks=20, block_size=8, max_num_batched_tokens=32),
           "bs3": dict(block_size=3)}
ncase = ntok = 0; fails = []
refs = {}
for name, c in CASES.items():
    c = dict(c); c.setdefault("ignore_eos", True)
    if "bad_words" in c: c["_bad_ids"] = bad_words_token_ids(tok, c["bad_words"])
    refs[name] = [ref_loop(p, c) for p in P]
print("bad words", repr(w1), repr(w2), refs["bad_words"] and bad_words_token_ids(tok, [w1, w2]))
for cname, cfg in CONFIGS.items():
    llm = llm0 if not cfg else LLM(model_dir(kind), dtype="float32", **cfg)
    from conftest import record_preemptions
    pre = record_preemptions(llm)
    # all cases in one batch, every prompt: 30 requests side by side
    sps, ps, keys = [], [], []
    for name, c in CASES.items():
        c = dict(c); c.setdefault("ignore_eos", True)
        for i, p in enumerate(P):
            sps.append(SamplingParams(max_tokens=N, temperature=0, **c)); ps.append(p); keys.append((name, i))
    for rnd in range(2):  # second round: prefix cache hits
        outs = llm.generate(ps, sps, use_tqdm=False)
        for (name, i), o in zip(keys, outs):
            got = list(o.outputs[0].token_ids); ref = refs[name][i]
            ncase += 1; ntok += len(ref)
            if got != ref:
                fails.append((cname, rnd, name, i, tie_gap(hf, P[i], got, ref) if name in ("rep1.5",) else None, got[:12], ref[:12]))
    print(cname, "preemptions", len(pre), "fails so far", len(fails), flush=True)
print(f"kind={kind} cases={ncase} tokens={ntok} fails={len(fails)}")
for f in fails[:30]: print("FAIL", f)
