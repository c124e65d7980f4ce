"""Single requests to a running server: python req.py PORT"""
import json, sys, httpx
url = f"http://127.0.0.1:{sys.argv[1]}"
h = httpx.Client(base_url=url, timeout=120)
def show(label, path, body):
    r = h.post(path, json=body)
    j = r.json()
    if r.status_code != 200:
        print(label, r.status_code, j.get("error", j)); return j
    if "choices" in j:
        print(label, 200, "usage", j["usage"], "n", len(j["choices"]), [c.get("text") or c.get("message", {}).get("content") for c in j["choices"]][:3])
    else:
        print(label, 200, json.dumps(j)[:300])
    return j
C, CC = "/v1/completions", "/v1/chat/completions"
P = "The quick brown fox"
M = [{"role": "user", "content": "Hi"}]
for cmd in sys.argv[2:]:
    exec(cmd)
