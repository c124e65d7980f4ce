import json, llguidance, llguidance.hf, torch
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok), eos_token=[2])
lim = llguidance.LLParserLimits(verbose_errors=False)
def show(name, text):
    tpl = llguidance.LLMatcher(llt, text, log_level=0, limits=lim)
    m = tpl.deep_copy()
    mask = m.compute_bitmask()
    bits = sum(bin(b).count("1") for b in mask)
    print(name, "tpl_err", tpl.is_error(), "err", m.is_error(), "bits", bits, "acc", m.is_accepting(), "stopped", m.is_stopped(), repr(m.get_error()[:300]))
show("empty-lang", llguidance.LLMatcher.grammar_from_regex(r"[^\s\S]"))
show("empty-regex", llguidance.LLMatcher.grammar_from_regex(r""))
show("choice50k", llguidance.grammar_from("choice", json.dumps([f"choice number {i}" for i in range(50000)])))
show("wide", llguidance.grammar_from("grammar", "root ::= " + " | ".join(f'"c{i}x"' for i in range(5000))))
show("ok", llguidance.LLMatcher.grammar_from_regex(r"[a-z]{3}"))
