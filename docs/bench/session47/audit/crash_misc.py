import sys, time, json, llguidance, llguidance.hf
from transformers import AutoTokenizer
kind, n = sys.argv[1], int(sys.argv[2])
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok))
if kind == "regex_parens":
    text = llguidance.LLMatcher.grammar_from_regex("(" * n + "a" + ")" * n)
elif kind == "lark_parens":
    text = llguidance.grammar_from("grammar", "start: " + "(" * n + "\"a\"" + ")" * n + "\n")
elif kind == "regex_concat":
    text = llguidance.LLMatcher.grammar_from_regex("ab" * n)
elif kind == "choice":
    text = llguidance.grammar_from("choice", json.dumps([f"c{i}" for i in range(n)]))
t = time.time(); m = llguidance.LLMatcher(llt, text, log_level=0); print(m.is_error(), m.get_error()[:150], time.time()-t)
