import time, threading, sys
sys.path.insert(0, "/work/main")
from roseinfer.structured.grammar import GrammarCompiler
from roseinfer.config import StructuredOutputs
from transformers import AutoTokenizer
import llguidance, llguidance.hf
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok))
class T: pass
gc = GrammarCompiler(T(), len(tok), ll_tokenizer=llt)
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
for k in range(2):
    done = threading.Event(); gaps = []
    def comp():
        t = time.time(); gc.check(StructuredOutputs(grammar=g(510, f"z{k}"))); print("check", round(time.time() - t, 3)); done.set()
    th = threading.Thread(target=comp); th.start()
    last = time.monotonic()
    while not done.is_set():
        time.sleep(0.001); now = time.monotonic(); gaps.append(now - last); last = now
    print("max main-thread gap during check: %.3fs" % max(gaps))
