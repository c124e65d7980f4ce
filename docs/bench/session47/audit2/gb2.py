import time, string, itertools
from llguidance.gbnf_to_lark import gbnf_to_lark
from common import names
ns = list(itertools.islice((n for n in names() if n not in ("root",)), 600))
def dense(nchain, nbig, sep):
    lines = ["root ::= " + ns[0] + " " + " ".join(ns[nchain + j] for j in range(nbig))]
    lines += [f"{ns[i]} ::= {ns[i+1]}" for i in range(nchain - 1)] + [f'{ns[nchain-1]} ::= "e"']
    budget = 65000 - sum(len(l) + 1 for l in lines)
    per = budget // nbig
    for j in range(nbig):
        nm = ns[nchain + j]; head = f"{nm} ::= "; tail = f" {nm}"
        k = (per - len(head) - len(tail) - 1) // len(sep)
        lines.append(head + sep * k + tail)
    return "\n".join(lines) + "\n"
for nc, nb, sep in [(400, 100, '"a" '), (400, 100, '.'), (450, 50, '.')]:
    g = dense(nc, nb, sep)
    t = time.time()
    try: out = gbnf_to_lark(g); r = "ok"
    except Exception as e: r = repr(e)[:100]
    print(nc, nb, repr(sep), len(g), g.count("::="), round(time.time() - t, 2), r, flush=True)
