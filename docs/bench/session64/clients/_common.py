"""Shared replay helper for the client-compatibility audit (session 64).

peel(): send a body; on a 400 that names a top-level field, record it, drop that
field and resend (at most 40 rounds), so one run lists every field a client's body
trips on, not only the first.  A 200 is read to the end (streams too) and checked
against what the client parses.  Results are appended to results/<client>.json.
"""
import json, os, sys, time, urllib.request, urllib.error, copy

BASE = os.environ.get("ROSE_BASE", "http://127.0.0.1:8796")
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "SmolLM2-135M-Instruct"


def post(path, body, timeout=120):
    data = json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": "Bearer sk-no-key"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            ctype = r.headers.get("Content-Type", "")
            raw = r.read().decode("utf-8", "replace")
            return r.status, ctype, raw
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode("utf-8", "replace")


def sse_events(raw):
    out = []
    for line in raw.splitlines():
        if line.startswith("data:"):
            d = line[5:].strip()
            if d == "[DONE]":
                out.append("[DONE]")
            else:
                try:
                    out.append(json.loads(d))
                except Exception:
                    out.append({"_unparsed": d[:200]})
    return out


def check(kind, stream, raw, body):
    """What the client reads. kind: chat | cmpl | llamacpp."""
    notes = []
    if stream:
        ev = sse_events(raw)
        objs = [e for e in ev if isinstance(e, dict)]
        if kind == "chat":
            text = "".join((c.get("delta") or {}).get("content") or "" for o in objs for c in o.get("choices", []))
            fin = [c.get("finish_reason") for o in objs for c in o.get("choices", []) if c.get("finish_reason")]
            usage = [o["usage"] for o in objs if o.get("usage")]
            notes.append(f"chunks={len(objs)} done={'[DONE]' in ev} finish={fin} text={text[:60]!r}")
            if (body.get("stream_options") or {}).get("include_usage"):
                notes.append("usage_chunk=" + ("yes" if usage else "MISSING"))
        elif kind == "cmpl":
            text = "".join(c.get("text") or "" for o in objs for c in o.get("choices", []))
            fin = [c.get("finish_reason") for o in objs for c in o.get("choices", []) if c.get("finish_reason")]
            notes.append(f"chunks={len(objs)} done={'[DONE]' in ev} finish={fin} text={text[:60]!r}")
        else:  # llama.cpp /completion stream: {content, stop}
            text = "".join(o.get("content") or "" for o in objs)
            stops = [o for o in objs if o.get("stop")]
            notes.append(f"chunks={len(objs)} last_stop={bool(stops)} text={text[:60]!r}")
            # SillyTavern's llama.cpp stream parser reads choices[0].text OR content
    else:
        try:
            j = json.loads(raw)
        except Exception:
            return [f"NOT JSON: {raw[:120]!r}"]
        if kind == "chat":
            m = j["choices"][0]["message"]
            notes.append(f"content={str(m.get('content'))[:60]!r} finish={j['choices'][0].get('finish_reason')} usage={'usage' in j}")
        elif kind == "cmpl":
            notes.append(f"text={j['choices'][0].get('text', '')[:60]!r} finish={j['choices'][0].get('finish_reason')}")
        else:
            notes.append(f"content={str(j.get('content'))[:60]!r} stop={j.get('stop')} stop_type={j.get('stop_type')}")
    return notes


def peel(client, label, path, body, kind, source, note=""):
    body = copy.deepcopy(body)
    stream = bool(body.get("stream"))
    rec = {"client": client, "label": label, "path": path, "source": source, "note": note,
           "body": copy.deepcopy(body), "failures": [], "final_status": None, "check": None}
    for _ in range(40):
        st, ctype, raw = post(path, body)
        if st == 200:
            rec["final_status"] = 200
            rec["check"] = check(kind, stream, raw, body)
            break
        try:
            err = json.loads(raw).get("error", {})
        except Exception:
            err = {"message": raw[:200]}
        param = err.get("param")
        f = {"status": st, "param": param, "code": err.get("code"), "message": (err.get("message") or "")[:300]}
        if param is not None:
            top = param.split(".")[0]
            f["value"] = body.get(top, "<nested>") if top in body else "<n/a>"
        rec["failures"].append(f)
        if st == 400 and param and param in body:
            del body[param]
            continue
        rec["final_status"] = st
        break
    first = rec["failures"][0] if rec["failures"] else None
    print(f"[{client}] {label}: first={first['status'] if first else 200}"
          + (f" param={first['param']!r}" if first else "")
          + f" | fields refused: {[f['param'] for f in rec['failures']]} | after peeling: {rec['final_status']} {rec['check']}")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    fn = os.path.join(HERE, "results", f"{client}.json")
    allr = []
    if os.path.exists(fn) and label != "__reset__":
        allr = json.load(open(fn))
    allr = [r for r in allr if r["label"] != label]
    allr.append(rec)
    json.dump(allr, open(fn, "w"), indent=1)
    return rec


def reset(client):
    fn = os.path.join(HERE, "results", f"{client}.json")
    if os.path.exists(fn):
        os.remove(fn)


SYS = "You are a helpful assistant."
MSGS = [{"role": "system", "content": SYS}, {"role": "user", "content": "Say hi in three words."}]
