import time, threading, llguidance, llguidance.hf
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok))
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
text = llguidance.grammar_from("grammar", g(510))
done = threading.Event(); gaps = []
def comp():
    t = time.time(); m = llguidance.LLMatcher(llt, text, log_level=0); print("compile", time.time() - t, m.is_error()); done.set()
th = threading.Thread(target=comp); th.start()
last = time.monotonic()
while not done.is_set():
    time.sleep(0.001); now = time.monotonic(); gaps.append(now - last); last = now
print("max main-thread gap during compile: %.3fs" % max(gaps))
