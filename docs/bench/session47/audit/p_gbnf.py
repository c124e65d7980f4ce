import threading, time, httpx
from harness import *
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
# warm llguidance tokenizer
httpx.post(BASE+"/v1/completions", json={"prompt":"Hi","max_tokens":2,"guided_regex":"a+"}, timeout=60)
probe("baseline", "/v1/completions", {"prompt":"Hi","max_tokens":4,"temperature":0})
probe("gbnf_4000_rules_130KB", "/v1/completions", {"prompt":"Hi","max_tokens":8,"temperature":0,"grammar": g(4000)})
