import json, sys, httpx, subprocess, time
port = 18432
p = subprocess.Popen([sys.executable, "-m", "roseinfer.server", "--port", str(port), "--log-level", "warning",
                      "--model", "/tmp/s47/audit/tinysmol", "--dtype", "float32"])
try:
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200: break
        except httpx.HTTPError: time.sleep(0.5)
    body = {"prompt": "The sea", "echo": True, "logprobs": 3, "n": 2, "temperature": 0.7, "max_tokens": 48, "seed": 97}
    r = httpx.post(f"http://127.0.0.1:{port}/v1/completions", json=body, timeout=60).json()
    c = r["choices"][1] if "<" in "".join(r["choices"][1]["logprobs"]["tokens"]) else r["choices"][0]
    lp = c["logprobs"]
    for t, o in zip(lp["tokens"], lp["text_offset"]):
        if "<" in t or 95 < o < 125:
            print(repr(t), o, repr(c["text"][o:o+len(t)]))
finally:
    p.terminate(); p.wait()
