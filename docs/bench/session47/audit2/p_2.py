from common import *
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
print("bytes", len(g(2000)))
probe("gbnf_chain_2000", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "grammar": g(2000)})
conc("6x gbnf_chain_2000", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "grammar": g(2000, f"v{k}")} for k in range(6)])
# just under the rule cap
probe("gbnf_chain_510", "/v1/completions", {"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g(510)})
conc("6x gbnf_chain_510", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g(510, f"v{k}")} for k in range(6)])
