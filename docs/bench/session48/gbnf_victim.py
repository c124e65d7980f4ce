"""A victim completion every 0.5 s beside GBNF grammars near the limits (session 47's audit
harness), against a server of the code on PYTHONPATH: the dense 501-rule 64 KB grammar, three
distinct ones at once, and a 4,200-rule chain (refused at 512 rules before b2bfce1).
   python gbnf_victim.py PORT    (the server: ../session47/audit/start.sh's, on PORT)"""
import itertools, os, string, sys, time

os.environ["AUDIT_PORT"] = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "session47", "audit2"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "session47", "audit"))
from common import conc, names  # noqa: E402
from harness import Victim, probe, summary  # noqa: E402

ns = list(itertools.islice((n for n in names() if n != "root"), 600))


def dense(tag=""):  # session 47's p_gbslow.py grammar: a 450-rule chain and 50 rules of ~1,200 "."
    lines = ["root ::= " + ns[0] + " " + " ".join(ns[450 + j] for j in range(50))]
    lines += [f"{ns[i]} ::= {ns[i + 1]}" for i in range(449)] + [f'{ns[449]} ::= "e{tag}"']
    per = (65000 - sum(len(line) + 1 for line in lines)) // 50
    for j in range(50):
        nm = ns[450 + j]; head = f"{nm} ::= "; tail = f' | "b" {nm}'
        lines.append(head + "." * (per - len(head) - len(tail) - 1) + tail)
    return "\n".join(lines) + "\n"


chain = "\n".join(["root ::= r0", *(f"r{i} ::= r{i + 1}" for i in range(4200)), 'r4200 ::= "ok" [a-c]'])
with Victim() as v:
    time.sleep(5)
print("baseline victim:", summary(v.samples), flush=True)
body = {"prompt": "Hi", "max_tokens": 4, "temperature": 0}
probe("dense 501 rules, 64 KB", "/v1/completions", {**body, "grammar": dense()}, settle=2)
conc("3x dense, distinct", "/v1/completions", [{**body, "grammar": dense(str(k))} for k in range(3)])
probe("chain of 4,200 rules, 64 KB", "/v1/completions", {**body, "grammar": chain}, settle=2)
