import json, random, sys, llguidance, llguidance.hf
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok), eos_token=[2])
N = int(sys.argv[1])
choices = [f"item-{random.Random(i).randrange(10**9):09d}-{i}" for i in range(N)]
tpl = llguidance.LLMatcher(llt, llguidance.grammar_from("choice", json.dumps(choices)), log_level=0)
rng = random.Random(0)
for k in range(3000):
    m = tpl.deep_copy()
    c = rng.choice(choices)
    for t in tok.encode(c):
        if not m.consume_token(t):
            print("request", k, "failed:", m.get_error()[:80]); sys.exit()
print("3000 walks ok")
