import sys, threading, numpy as np
import llguidance, llguidance.hf
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
ll = llguidance.hf.from_tokenizer(tok, n_vocab=49152)
kind, chars, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def name(i):
    s = ""
    while True:
        s = "abcdefghijklmnopqrstuvwxyz"[i % 26] + s; i //= 26
        if i == 0: return s
lines = ["start: " + name(0)]
i = 0
while sum(len(l) + 1 for l in lines) < chars:
    if kind == "alias": lines.append(f"{name(i)}: {name(i+1)}")
    else: lines.append(f'{name(i)}: "a" {name(i+1)}?')
    i += 1
lines.append(f'{name(i)}: "z"')
text = "\n".join(lines) + "\n"
res = []
def run(): res.append(llguidance.LLMatcher(ll, llguidance.grammar_from("lark", text), log_level=0))
threading.stack_size(mb << 20); t = threading.Thread(target=run); t.start(); t.join()
print(kind, len(text), "levels", i, "stack MB", mb, "error", res[0].is_error(), res[0].get_error()[:80])
