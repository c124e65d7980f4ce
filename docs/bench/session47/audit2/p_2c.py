from common import *
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
with Victim() as v: time.sleep(5)
print("baseline victim:", summary(v.samples))
conc("6x gbnf_510 distinct, max_tokens 4", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g(510, f"a{k}")} for k in range(6)])
conc("6x gbnf_510 distinct, max_tokens 4 (repeat same 6 -> cached)", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "grammar": g(510, f"a{k}")} for k in range(6)])
conc("6x gbnf_510 distinct, max_tokens 1", "/v1/completions", [{"prompt": "Hi", "max_tokens": 1, "temperature": 0, "grammar": g(510, f"b{k}")} for k in range(6)])
conc("6x gbnf_510 distinct, /tokenize-free check: 6x regex simple", "/v1/completions", [{"prompt": "Hi", "max_tokens": 4, "temperature": 0, "guided_regex": f"[a-z]{{{k+1},9}}"} for k in range(6)])
