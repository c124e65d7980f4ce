"""GGUF (Q4_K_M-style mixes, every block type) tiny models: roseinfer LLM greedy vs transformers'
own GGUF load, batched prompts of different lengths, chunked prefill, eager."""
import os
from common import *
import test_gguf_quants as tq
import gguf_files
from roseinfer import LLM, SamplingParams
from roseinfer.tokenizer import bytes_to_unicode

def with_tokenizer(path, arch, head_dim=None, **meta):
    w = gguf_files.new_writer(path, arch, head_dim, **meta)
    sp = bytes_to_unicode()
    toks = [sp[b] for b in list(range(32, 127)) + list(range(0, 32)) + list(range(127, 159))] + [bytes_to_unicode()[32] + 't']
    assert len(toks) == 160
    w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre("default")
    w.add_token_list(toks); w.add_token_types([1] * 160); w.add_token_merges([f"{sp[32]} t"])
    w.add_eos_token_id(159); w.add_bos_token_id(159)
    return w
tq.new_writer = with_tokenizer
import transformers
D = "/tmp/s60/audit_oracle/models/gguf"; os.makedirs(D, exist_ok=True)
tot = 0; fails = []
for name, case in tq.CASES.items():
    path = f"{D}/{name}.gguf"
    if not os.path.exists(path): tq._write_model(path, case)
    hf = transformers.AutoModelForCausalLM.from_pretrained(D, gguf_file=f"{name}.gguf", dtype=torch.float32).eval()
    P = [rand_prompt(160, 4, 51), rand_prompt(160, 60, 52), rand_prompt(160, 23, 53)]
    ref = [hf_greedy(hf, p, 24) for p in P]
    for cname, cfg in {"default": {}, "eager_chunk16": dict(enforce_eager=True, max_num_batched_tokens=16, block_size=5)}.items():
        llm = LLM(path, dtype="float32", **cfg)
        outs = llm.generate(P, SamplingParams(max_tokens=24, temperature=0, ignore_eos=True), use_tqdm=False)
        for i, (o, r) in enumerate(zip(outs, ref)):
            g = list(o.outputs[0].token_ids); tot += 1
            if g != r: fails.append((name, cname, i, tie_gap(hf, P[i], g, r)))
        print(name, cname, "fails so far", len(fails), flush=True)
print("gguf cases", tot, "tokens", tot * 24, "fails", len(fails))
for f in fails: print("FAIL", f)
