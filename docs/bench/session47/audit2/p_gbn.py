from common import *
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
for n in (1, 32):
    probe(f"gbnf_chain_510 n={n} (cached)", "/v1/completions", {"prompt": "Hi", "max_tokens": 1, "temperature": 1, "n": n, "grammar": g(510, "a0")}, timeout=120, settle=1.5)
