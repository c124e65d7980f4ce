from common import *
from roseinfer.loader import load_model
from roseinfer.config import EngineConfig
from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.tokenizer import Tokenizer
import inspect
L = llm()
tok = L.tokenizer
prompt = tok.encode("Hello there")
out = tok.encode("Hé<|im_end|> 日本語 ok") + [2, 1] + tok.encode(" end")
print("out ids", out)
for skip in (True, False):
    d = IncrementalDetokenizer(tok, skip_special_tokens=skip)
    d.start_prompt(prompt)
    s = "".join(d.on_token(t) for t in out) + d.flush()
    print("skip", skip, repr(s), "== decode:", s == tok.decode(out, skip_special_tokens=skip))
trial("skip_special_tokens='no'", lambda: IncrementalDetokenizer(tok, skip_special_tokens="no").skip_special_tokens)
trial("on_token(10**6)", lambda: IncrementalDetokenizer(tok).on_token(10**6))
trial("on_token(-1)", lambda: IncrementalDetokenizer(tok).on_token(-1))
trial("start_prompt after token", lambda: (lambda d: (d.on_token(100), d.start_prompt([1])))(IncrementalDetokenizer(tok)))
trial("on_token('a')", lambda: IncrementalDetokenizer(tok).on_token("a"))
