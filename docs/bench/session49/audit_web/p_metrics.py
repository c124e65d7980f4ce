import httpx, re, time
B = "http://127.0.0.1:18201"
c = httpx.Client(base_url=B, timeout=60)
def m():
    r = c.get("/metrics")
    return r.headers.get("content-type"), {l.split(" ")[0]: l.split(" ")[1] for l in r.text.splitlines() if l and not l.startswith("#")}
ct, a = m()
print("content-type:", ct)
print("names:", sorted({re.sub(r"\{.*", "", k) for k in a}))
r = c.post("/v1/completions", json={"prompt":"hello there","max_tokens":7,"temperature":0})
print("completion usage", r.json()["usage"])
r = c.post("/v1/completions", json={"prompt":"hello there","max_tokens":7,"temperature":0, "foo": 1})
print("bad req", r.status_code)
time.sleep(0.5)
_, b = m()
for k in sorted(set(a)|set(b)):
    if a.get(k) != b.get(k) and not k.endswith("_bucket"):
        print(f"  {k}: {a.get(k)} -> {b.get(k)}")
