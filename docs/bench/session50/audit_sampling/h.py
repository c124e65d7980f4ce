"""Probe helper: post(path, body_or_raw) -> (status, json or text); stream(path, body) -> list of events."""
import json, httpx
BASE = "http://127.0.0.1:8860"
C = httpx.Client(base_url=BASE, timeout=120)
def post(path, body, raw=False):
    if raw:
        r = C.post(path, content=body, headers={"Content-Type": "application/json"})
    else:
        r = C.post(path, json=body)
    try:
        return r.status_code, r.json()
    except Exception:
        return r.status_code, r.text
def stream(path, body):
    evs = []
    with C.stream("POST", path, json=body) as r:
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = line[6:]
                evs.append(d if d == "[DONE]" else json.loads(d))
    return r.status_code, evs
def show(tag, res):
    s, j = res
    if isinstance(j, dict) and "error" in j:
        print(f"{tag}: {s} param={j['error'].get('param')!r} msg={j['error']['message'][:150]!r}")
    elif isinstance(j, dict) and "choices" in j:
        ch = j["choices"]
        print(f"{tag}: {s} " + " | ".join(repr((c.get('text') if 'text' in c else c['message'].get('content'))) + f"[{c['finish_reason']}]" for c in ch) + f" usage={j.get('usage')}")
    else:
        print(f"{tag}: {s} {str(j)[:300]}")
def ctext(path, body):
    s, j = post(path, body)
    if s != 200: return s, j
    return s, [(c.get('text') if 'text' in c else c['message'].get('content')) for c in j["choices"]]
def stext(path, body):
    s, evs = stream(path, body)
    out = {}
    fin = {}
    for e in evs:
        if e == "[DONE]" or "choices" not in e: continue
        for c in e["choices"]:
            t = c.get("text") if "text" in c else (c["delta"].get("content") or "")
            out[c["index"]] = out.get(c["index"], "") + (t or "")
            if c.get("finish_reason"): fin[c["index"]] = c["finish_reason"]
    return s, [out[k] for k in sorted(out)], fin, evs
