import sys, time, threading, llguidance, llguidance.hf
from transformers import AutoTokenizer
from concurrent.futures import ThreadPoolExecutor
n = int(sys.argv[1]); mode = sys.argv[2]
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok))
g = "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
t = time.time(); text = llguidance.grammar_from("grammar", g); print("to_lark", time.time()-t, flush=True)
def comp():
    m = llguidance.LLMatcher(llt, text, log_level=0); return m.is_error(), m.get_error()[:200]
t = time.time()
if mode == "thread":
    print(ThreadPoolExecutor(1).submit(comp).result())
else:
    print(comp())
print("compile", time.time()-t)
