import time, httpx
from harness import BASE
def g(n, tag=""):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
for n in (100, 510):
  for mt in (1, 4):
    for rep in range(2):
        b = {"prompt": "Hi", "max_tokens": mt, "temperature": 0, "grammar": g(n, "a0")}
        t = time.monotonic(); r = httpx.post(BASE + "/v1/completions", json=b, timeout=60); print(n, mt, rep, r.status_code, round(time.monotonic() - t, 3))
t = time.monotonic(); r = httpx.post(BASE + "/tokenize", json={"prompt": g(510)}, timeout=60); print("tokenize", round(time.monotonic() - t, 3))
