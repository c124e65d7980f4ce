from common import *
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
conc("6x gbnf_chain_2000 identical", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "grammar": g(2000)} for k in range(6)])
conc("6x gbnf_chain_510 (again)", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g(510, f"w{k}")} for k in range(6)])
