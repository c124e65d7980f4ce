import json, sys, httpx, subprocess, time, socket
port = 18431
p = subprocess.Popen([sys.executable, "-m", "roseinfer.server", "--port", str(port), "--log-level", "warning",
                      "--model", "/tmp/s47/audit/tinysmol", "--dtype", "float32"])
try:
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200: break
        except httpx.HTTPError: time.sleep(0.5)
    bad = 0
    for seed in range(300):
        body = {"prompt": "The sea", "echo": True, "logprobs": 3, "n": 2, "temperature": 0.7, "max_tokens": 48, "seed": seed}
        r = httpx.post(f"http://127.0.0.1:{port}/v1/completions", json=body, timeout=60).json()
        for c in r["choices"]:
            lp = c["logprobs"]
            if "".join(lp["tokens"]) != c["text"] or lp["token_logprobs"][0] is not None:
                bad += 1
                if bad <= 3:
                    print("seed", seed, repr(c["text"][-40:]), lp["tokens"][-6:], c["finish_reason"])
                    # where do they differ
                    j = "".join(lp["tokens"])
                    k = next(i for i in range(min(len(j), len(c["text"]))) if j[i] != c["text"][i]) if j != c["text"] else None
                    print("  first diff at", k, repr(j[k-5:k+10]) if k else None, repr(c["text"][k-5:k+10]) if k else None, len(j), len(c["text"]))
    print("bad", bad)
finally:
    p.terminate(); p.wait()
