import time, sys
from llguidance.gbnf_to_lark import gbnf_to_lark
def chain(n): return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
def wide(n, k): return "root ::= r0\n" + "".join(f"r{i} ::= " + '"a" ' * k + f"r{i+1}\n" for i in range(n)) + f"r{n} ::= \"e\"\n"
for name, g in [("chain510", chain(510)), ("wide510x28", wide(510, 28)), ("wide255x60", wide(255, 60))]:
    t = time.time(); out = gbnf_to_lark(g); print(name, len(g), g.count("::="), round(time.time() - t, 2), flush=True)
