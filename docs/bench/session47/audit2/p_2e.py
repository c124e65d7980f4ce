import time, httpx
from harness import BASE
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
for rep in range(6):
    b = {"prompt": "Hi", "max_tokens": 1, "temperature": 0, "grammar": g(510, "a0")}
    t = time.monotonic(); r = httpx.post(BASE + "/v1/completions", json=b, timeout=60); print(r.status_code, round(time.monotonic() - t, 3))
