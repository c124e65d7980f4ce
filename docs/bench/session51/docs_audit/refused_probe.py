import json, re, sys, httpx
from roseinfer.server.fields import FIELDS, Kind
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=60)
base = {"chat": ("/v1/chat/completions", {"messages":[{"role":"user","content":"hi"}], "max_tokens":2}),
        "completions": ("/v1/completions", {"prompt":"hi","max_tokens":2}),
        "generate": ("/generate", {"prompt":"hi","max_new_tokens":2})}
# non-neutral candidate values
def bad_values(name):
    return [True, 5, "x", ["x"], {"x": 1}, 0.5]
def setf(body, name, val):
    body = json.loads(json.dumps(body))
    if name.startswith("messages[]."):
        body["messages"][0][name.split(".",1)[1]] = val
    elif "." in name:
        a, b = name.split(".", 1)
        if a == "stream_options":
            body["stream"] = True
        body.setdefault(a, {})
        if a == "structured_outputs": body[a]["json_object"] = True
        body[a][b] = val
    else:
        body[name] = val
    return body
probs = []
for f in FIELDS:
    if f.kind != Kind.REFUSED: continue
    for ep in f.endpoints:
        path, b = base[ep]
        # find a refused value: one of bad_values that gives 400 with param naming field
        got = []
        for v in bad_values(f.name):
            if f.accepts is not None:
                try:
                    if f.accepts(v): continue
                except Exception:
                    pass
            r = c.post(B+path, json=setf(b, f.name, v))
            if r.status_code == 200 and "stream" in setf(b, f.name, v):
                pass
            got.append((v, r.status_code, r.json().get("error",{}).get("param") if r.status_code!=200 and r.headers.get("content-type","").startswith("application/json") else None))
        bad = [g for g in got if g[1] != 400 or (g[2] or "").replace("messages.0.","messages[].") not in (f.name, )]
        print(f"{f.name:45s} {ep:12s} unless {f.accepts_doc:25s} {got}" if bad else f"ok {f.name} {ep}")
