"""The composed grammar's BLANK (greedy) takes every blank after </think>: an answer that must
start with whitespace (a choice " yes", a regex "\\n[0-9]+") can never be written; the mask
then allows only more blank space, to max_tokens. In "optional" mode an answer whose first
lexeme can read "<think>..." takes the model's <think> as its own text."""
from common import *
hf = build_tokenizer()
hf.add_tokens(["<think>", "</think>"])
tok, comp = compiler_for(hf)
V = len(hf)

def allowed_texts(m, limit=12):
    mask = fill_bitmask([m], V)
    ids = [i for i in range(V) if (int(mask[0, i // 32]) >> (i % 32)) & 1]
    return len(ids), [hf.decode([i]) for i in ids[:limit]]

for form in (dict(choice=(" yes", " no")), dict(regex="\\n[0-9]+"), dict(regex=" ?[0-9]+")):
    for mode in ("required",):
        spec = StructuredOutputs(**form, thinking_first=mode)
        good = form.get("choice", ("\n42",))[0] if "choice" in form else ("\n42" if "\\n" in form["regex"] else " 42")
        print(form, mode)
        print("   alone accepts", repr(good), ":", accepts(comp, tok, StructuredOutputs(**form), good))
        for prefix in ("<think>q</think>", "<think>q</think>\n\n"):
            print(f"   accepts {prefix + good!r}:", accepts(comp, tok, spec, prefix + good))
        m = comp.matcher(spec)
        m.consume_tokens(tok.encode("<think>q</think>", False))
        m.consume_tokens(tok.encode(good[0], False))
        print(f"   after '<think>q</think>{good[0]!r}' the mask allows (n, first):", allowed_texts(m))

print("-- optional mode, an answer whose first lexeme reads '<think>'")
for form, good in ((dict(regex="[a-z<>/]+"), "abc"), (dict(grammar='start: /[^\\n]+/'), "abc")):
    spec = StructuredOutputs(**form, thinking_first="optional")
    print(form, "accepts <think>q</think>\\n\\n" + good, ":", accepts(comp, tok, spec, "<think>q</think>\n\n" + good),
          "| required mode:", accepts(comp, tok, StructuredOutputs(**form, thinking_first="required"), "<think>q</think>\n\n" + good))
    m = comp.matcher(spec)
    m.consume_tokens(tok.encode("<think>q</think>", False))
    print("   after '<think>q</think>' mask allows '\\n':", allowed(m, tok.encode("\n", False)[0], V))
