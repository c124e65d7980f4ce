"""An end-of-sequence token that the vocabulary adds as text (special: false, as fine-tunes
that `add_tokens(["<|im_end|>"])` have) becomes grammar text: a JSON string may hold it."""
from common import *
from tokenizers import AddedToken
hf = build_tokenizer(special_tokens=["<|endoftext|>"])
hf.add_tokens([AddedToken("<|im_end|>", special=False), "<think>", "</think>"])
hf.eos_token = "<|im_end|>"
tok, comp = compiler_for(hf)
eos = hf.convert_tokens_to_ids("<|im_end|>")
print("eos id", eos, "stop ids", sorted(tok.stop_token_ids))
spec = StructuredOutputs(json={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
m = comp.matcher(spec)
m.consume_tokens(tok.encode('{"a":"x', False))
print("inside a JSON string, eos allowed:", allowed(m, eos, len(hf)))
print("  consume eos ->", m.consume_token(eos), "accepting", m.is_accepting(), "stopped", m.is_stopped())
m2 = comp.matcher(spec)
m2.consume_tokens(tok.encode('{"a":', False))
print("after '{\"a\":', eos allowed:", allowed(m2, eos, len(hf)))
# baseline: llguidance's own import (every added token special)
import llguidance, llguidance.hf
ll = llguidance.hf.from_tokenizer(hf, n_vocab=len(hf), eos_token=sorted(tok.stop_token_ids))
from roseinfer.structured.grammar import _compile
base = _compile(ll, grammar_text(spec))
base.consume_tokens(tok.encode('{"a":"x', False))
print("baseline (llguidance.hf import): inside string, eos allowed:", allowed(base, eos, len(hf)))
