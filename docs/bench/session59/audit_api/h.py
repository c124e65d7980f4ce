import json, time, httpx
B = "http://127.0.0.1:18301"
C = httpx.Client(base_url=B, timeout=120)
MODEL = None
def post(path, body, **kw):
    r = C.post(path, json=body, **kw)
    try: j = r.json()
    except Exception: j = r.text
    return r.status_code, j
def chat(body): 
    body.setdefault("messages", [{"role":"user","content":"Say hi"}]); return post("/v1/chat/completions", body)
def comp(body):
    body.setdefault("prompt", "The capital of France is"); return post("/v1/completions", body)
def stream(path, body):
    body = dict(body, stream=True)
    chunks = []
    with C.stream("POST", path, json=body) as r:
        if r.status_code != 200:
            return r.status_code, json.loads(r.read())
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = line[6:]
                chunks.append(d if d == "[DONE]" else json.loads(d))
    return 200, chunks
def show(label, x):
    s = json.dumps(x, ensure_ascii=False)
    print(f"== {label}: {s[:1500]}")
