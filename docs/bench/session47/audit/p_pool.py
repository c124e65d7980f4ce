import threading, time, httpx, statistics
from harness import *
def g(n, tag):
    return "root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}{tag}\" r{i+1} | \"u{i}\"" for i in range(n)) + f"\nr{n} ::= \"end\"\n"
bodies = [{"prompt": "Hi", "max_tokens": 4, "grammar": g(2000, f"v{k}")} for k in range(6)]
print("body KB", len(str(bodies[0])) // 1024)
sv = []
def structured_victim(stop):
    with httpx.Client(timeout=120) as c:
        while not stop.is_set():
            t0 = time.monotonic(); r = c.post(BASE + "/v1/completions", json={"prompt": "Hi", "max_tokens": 4, "guided_regex": "[a-z]{3,9}"}); sv.append((time.monotonic() - t0, r.status_code)); time.sleep(0.5)
res = []
with Victim() as v:
    stop = threading.Event(); st = threading.Thread(target=structured_victim, args=(stop,)); st.start()
    time.sleep(2); t0 = time.monotonic()
    ths = [threading.Thread(target=lambda b=b: res.append(httpx.post(BASE + "/v1/completions", json=b, timeout=300).status_code)) for b in bodies]
    for t in ths: t.start()
    for t in ths: t.join(300)
    dt = time.monotonic() - t0; time.sleep(2); stop.set(); st.join(130)
print(f"6 x GBNF(2000 rules): {dt:.1f}s statuses {res}")
print("plain victim during:", summary([s for s in v.samples if s[0] >= t0 and s[0] <= t0 + dt]))
print("structured victim: max %.1fs med %.2fs n=%d" % (max(x[0] for x in sv), statistics.median(x[0] for x in sv), len(sv)))
