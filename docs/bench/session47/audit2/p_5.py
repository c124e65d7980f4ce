from common import *
def sse(name, body):
    t0 = time.monotonic(); ev = []
    with Victim() as v:
        time.sleep(1)
        try:
            with httpx.stream("POST", BASE + "/v1/completions", json=body, timeout=120) as r:
                st = r.status_code
                if st != 200: ev.append(r.read().decode()[:300])
                else:
                    for line in r.iter_lines():
                        if line: ev.append(line[:300])
                        if len(ev) > 50: break
        except Exception as e: st = f"EXC {e!r}"[:200]
        dt = time.monotonic() - t0; time.sleep(1)
    print(f"== {name}: {dt:.2f}s status {st}; events:", *ev[:6], sep="\n   ")
    print("   victim:", summary(v.samples), "health", httpx.get(BASE + "/health").status_code, flush=True)
C = "/v1/completions"
choice = {"prompt": "Hello", "max_tokens": 16, "temperature": 0, "guided_choice": [f"choice number {i}" for i in range(50001)]}
gw = "root ::= " + " | ".join(f"\"c{i}x\"" for i in range(5000)) + "\n"
print("gbnf wide bytes", len(gw))
gbnf = {"prompt": "Hello", "max_tokens": 16, "temperature": 0, "grammar": gw}
anyof = {"prompt": "Hello", "max_tokens": 16, "temperature": 0, "guided_json": {"anyOf": [{"type": "object", "properties": {f"k{i}": {"const": i}}, "required": [f"k{i}"]} for i in range(3000)]}}
for name, b in [("choice_50001", choice), ("gbnf_wide_5000", gbnf), ("anyof_3000", anyof)]:
    probe(name + " #1", C, b, timeout=120)
    probe(name + " #2", C, b, timeout=120)
for name, b in [("choice_50001", choice), ("gbnf_wide_5000", gbnf), ("anyof_3000", anyof)]:
    sse(name + " stream", {**b, "stream": True})
