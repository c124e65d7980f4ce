import json, httpx, time
BASE = "http://127.0.0.1:18401"
C = httpx.Client(base_url=BASE, timeout=60)
M = "tinysmol"
def post(path, body, raw=False, headers=None, **kw):
    t = time.time()
    if raw:
        r = C.post(path, content=body, headers=headers or {"content-type": "application/json"}, **kw)
    else:
        r = C.post(path, json=body, headers=headers, **kw)
    try:
        j = r.json()
    except Exception:
        j = r.text
    return r.status_code, j, time.time() - t
def chat(extra=None, msgs=None, **kw):
    b = {"model": M, "messages": msgs or [{"role": "user", "content": "hi"}], "max_tokens": 8, "temperature": 0}
    b.update(extra or {}); b.update(kw)
    return post("/v1/chat/completions", b)
def comp(extra=None, **kw):
    b = {"model": M, "prompt": "hello world", "max_tokens": 8, "temperature": 0}
    b.update(extra or {}); b.update(kw)
    return post("/v1/completions", b)
def short(j, n=300):
    s = json.dumps(j, ensure_ascii=False) if not isinstance(j, str) else j
    return s[:n]
def show(label, res, n=300):
    s, j, t = res
    print(f"[{s}] {t:.2f}s {label}: {short(j, n)}")
def sse(path, body):
    events = []
    with C.stream("POST", path, json=body) as r:
        status = r.status_code
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = line[6:]
                events.append(d if d == "[DONE]" else json.loads(d))
            elif line.strip():
                events.append(("RAW", line))
    return status, events
