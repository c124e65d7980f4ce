import itertools, sys
from common import *
from llguidance.gbnf_to_lark import gbnf_to_lark
ns = list(itertools.islice((n for n in names() if n != "root"), 600))
def dense(nchain, nbig, sep, tag=""):
    lines = ["root ::= " + ns[0] + " " + " ".join(ns[nchain + j] for j in range(nbig))]
    lines += [f"{ns[i]} ::= {ns[i+1]}" for i in range(nchain - 1)] + [f'{ns[nchain-1]} ::= "e{tag}"']
    budget = 65000 - sum(len(l) + 1 for l in lines)
    per = budget // nbig
    for j in range(nbig):
        nm = ns[nchain + j]; head = f"{nm} ::= "; tail = f' | "b" {nm}'
        k = (per - len(head) - len(tail) - 1) // len(sep)
        lines.append(head + sep * k + tail)
    return "\n".join(lines) + "\n"
g = dense(450, 50, ".")
t = time.time(); gbnf_to_lark(g); print("offline convert", round(time.time() - t, 2), "bytes", len(g), "rules", g.count("::="), flush=True)
probe("gbnf_dense_450x50", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g}, timeout=120, settle=2)
probe("gbnf_dense_450x50 again (cached template)", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g}, timeout=120, settle=2)
if len(sys.argv) > 1:
    conc("3x gbnf_dense distinct", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": dense(450, 50, ".", str(k))} for k in range(3)], timeout=200)
