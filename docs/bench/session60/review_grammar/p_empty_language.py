"""A constraint no text meets: alone it is refused at validation (a 400); after thinking the
probe passes (the thinking's first token is fine) and the failure comes after </think>."""
from common import *
from roseinfer.structured.grammar import GrammarError, grammar_failure
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>"])
tok, comp = compiler_for(hf); V = len(hf)
for mode in (None, "required"):
    spec = StructuredOutputs(regex="[^\\s\\S]", thinking_first=mode)
    try:
        comp.check(spec)
    except GrammarError as e:
        print(mode, "-> refused at check:", e); continue
    m = comp.matcher(spec)
    ids = tok.encode("<think>q", False)
    print(mode, "-> compiles; consumes '<think>q':", m.consume_tokens(ids))
    close = tok.encode("</think>", False)[0]
    print("   </think> allowed by the mask:", allowed(m, close, V))
    print("   consume </think>:", m.consume_token(close), "| failure:", grammar_failure(m))
    mask = fill_bitmask([m], V)
    print("   after </think>: tokens allowed:", int(sum(bin(int(w) & 0xffffffff).count("1") for w in mask[0])),
          "| failure now:", grammar_failure(m))
