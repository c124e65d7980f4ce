"""GBNF to Lark for grammars of ~64 KB in eleven shapes: our converter (roseinfer/structured/gbnf.py)
and llguidance's, seconds each and whether they write the same Lark (the 4,200-rule chain is not
run through llguidance's: its sweeps take ~18 s for 4,000 rules).   python gbnf_shapes.py"""
import itertools, string, time

from llguidance.gbnf_to_lark import gbnf_to_lark as theirs

from roseinfer.structured.gbnf import gbnf_to_lark as ours

N = 64 * 1024
L = string.ascii_lowercase
ns = [n for n in itertools.chain(L, (a + b for a in L for b in L), (a + b + c for a in L for b in L for c in L)) if n != "root"][:600]
dense = ["root ::= " + ns[0] + " " + " ".join(ns[450 + j] for j in range(50))]
dense += [f"{ns[i]} ::= {ns[i + 1]}" for i in range(449)] + [f'{ns[449]} ::= "e"']
per = (65000 - sum(len(line) + 1 for line in dense)) // 50
for j in range(50):
    head, tail = f"{ns[450 + j]} ::= ", f' | "b" {ns[450 + j]}'
    dense.append(head + "." * (per - len(head) - len(tail) - 1) + tail)
shapes = {
    "dense": "\n".join(dense) + "\n",  # session 47's: a 450-rule chain, 50 rules of ~1,200 "."
    "literals": "root ::= " + '"a" ' * (N // 4 - 4) + "\n",
    "chars": 'root ::= "' + "a" * (N - 20) + '"\n',
    "chain": "root ::= r0\n" + "".join(f"r{i} ::= r{i + 1}\n" for i in range(4200)) + 'r4200 ::= "e"\n',
    "alts": "root ::= " + " | ".join(f'"{i}"' for i in range(7000)) + "\n",
    "comments": "# " + "x" * (N - 40) + '\nroot ::= "a"\n',
    "parens": "root ::= " + "(" * 300 + '"a" ' * 13000 + ")" * 300 + "\n",
    "parens_deep": "root ::= " + "(" * 20000 + '"a"' + ")" * 20000 + "\n",
    "classes": "root ::= " + "[a-z] " * 10000 + "\n",
    "refs": "root ::= " + " ".join(["x"] * 30000) + '\nx ::= "a"\n',
    "rep": "root ::= " + '"a"{1,3} ' * 7000 + "\n",
}


def run(convert, text):
    t = time.perf_counter()
    try:
        out = convert(text)
    except Exception as e:
        out = type(e).__name__
    return out, time.perf_counter() - t


for name, text in shapes.items():
    assert len(text) <= N, (name, len(text))
    a, t1 = run(ours, text)
    if name == "chain":
        print(f"{name:12s} {len(text):6d} chars, {text.count('::='):5d} rules: ours {t1:.3f} s, llguidance's not run")
        continue
    b, t2 = run(theirs, text)
    result = a if len(a) < 40 else "Lark"
    print(f"{name:12s} {len(text):6d} chars, {text.count('::='):5d} rules: ours {t1:.3f} s, llguidance's {t2:.3f} s, same: {a == b} ({result})")
