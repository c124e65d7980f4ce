from common import *
from roseinfer.chat_repl import ChatSession
from roseinfer import SamplingParams
L = llm()
seen = []
class Spy:
    def encode_chat(self, m): seen.append(L.tokenizer.decode(L.encode_chat(m))); return L.encode_chat(m)
    def stream(self, ids, p): return iter(())
lines = iter(["Hi"])
def read(prompt):
    try: return next(lines)
    except StopIteration: raise EOFError
ChatSession(Spy(), SamplingParams(), "", read).run()
print("REPL --system '' renders:", repr(seen[0]))
print("an empty system message renders:", repr(L.tokenizer.decode(L.encode_chat([{"role":"system","content":""},{"role":"user","content":"Hi"}]))))
