import sys, time, llguidance, llguidance.hf
from transformers import AutoTokenizer
n = int(sys.argv[1])
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok))
g = "start: r0\n" + "\n".join(f"r{i}: \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n}: \"end\"\n"
text = llguidance.grammar_from("grammar", g); print(len(g), flush=True)
t = time.time(); m = llguidance.LLMatcher(llt, text, log_level=0); print(m.is_error(), m.get_error()[:200], time.time()-t)
