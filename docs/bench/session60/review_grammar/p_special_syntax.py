"""llguidance's Lark names a special token as <name> (or <[id]>): with the patch, a grammar that
names an added text token (<think>, <tool_call>) that way no longer compiles / matches."""
from common import *
import llguidance, llguidance.hf
from roseinfer.structured.grammar import _compile
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>"])
tok, comp = compiler_for(hf)
think = hf.convert_tokens_to_ids("<think>")
base_ll = llguidance.hf.from_tokenizer(hf, n_vocab=len(hf), eos_token=sorted(tok.stop_token_ids))
for g in ['start: <think> "x"', f'start: <[{think}]> "x"', 'start: "<think>" "x"']:
    for label, ll in (("llguidance import", base_ll), ("patched (roseinfer)", comp.ll_tokenizer)):
        m = _compile(ll, llguidance.LLMatcher.grammar_from_lark(g))
        if m.is_error():
            print(f"{g!r:28} {label:20} compile error: {m.get_error()[:120]!r}"); continue
        ok = m.consume_tokens([think] + tok.encode("x", False)) and m.is_accepting()
        print(f"{g!r:28} {label:20} accepts [<think> id, x]: {bool(ok)}")
