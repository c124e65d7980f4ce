import json, sys, httpx
from roseinfer.server.fields import FIELDS, Kind
sys.path.insert(0, "/tmp/s51/docs_audit")
from refused_probe_lib import base, setf
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=60)
def neutrals(doc):
    d = doc.split(" (")[0]
    out = []
    for part in d.replace(" or ", "|").split("|"):
        part = part.strip()
        if part.startswith("<= "): out += [int(part[3:]), -5]
        elif part.startswith("equal to"): out.append("N")
        else:
            try: out.append(json.loads(part))
            except Exception: out.append(("?", part))
    return out
for f in FIELDS:
    if f.kind != Kind.REFUSED: continue
    for ep in f.endpoints:
        path, b = base[ep]
        for v in neutrals(f.accepts_doc):
            if isinstance(v, tuple): print("??", f.name, f.accepts_doc); continue
            if v == "N": v = 1
            body = setf(b, f.name, v)
            if body.get("stream"):
                r = c.post(B+path, json=body); ok = r.status_code == 200
            else:
                r = c.post(B+path, json=body); ok = r.status_code == 200
            if not ok: print("NEUTRAL REFUSED", f.name, ep, v, r.status_code, r.text[:200])
print("done")
