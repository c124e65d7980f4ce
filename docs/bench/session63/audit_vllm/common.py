"""Shared helpers for the vLLM-vs-roseinfer audit probes.

vLLM 0.32 (CPU) on 127.0.0.1:18501, roseinfer on 127.0.0.1:18502, both serving
/tmp/s61/i22/hf_fp32 (SmolLM2-135M-Instruct, fp32) as "SmolLM2-135M-Instruct".
Every probe sends the same raw JSON to both ports and prints status + trimmed body.
"""

from __future__ import annotations

import json
import sys
import time

import httpx

PORTS = {"vllm": 18501, "rose": 18502}
MODEL = "SmolLM2-135M-Instruct"
TIMEOUT = 120.0


def url(server: str, path: str) -> str:
    return f"http://127.0.0.1:{PORTS[server]}{path}"


def post(server: str, path: str, body, raw: bytes | None = None, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    data = raw if raw is not None else json.dumps(body).encode()
    t = time.time()
    r = httpx.post(url(server, path), content=data, headers=h, timeout=TIMEOUT)
    try:
        j = r.json()
    except Exception:
        j = r.text
    return r.status_code, j, time.time() - t


def get(server: str, path: str):
    r = httpx.get(url(server, path), timeout=TIMEOUT)
    try:
        j = r.json()
    except Exception:
        j = r.text
    return r.status_code, j


def stream(server: str, path: str, body):
    """Return (status, list of parsed chunks or raw lines)."""
    out = []
    with httpx.stream("POST", url(server, path), json=body, timeout=TIMEOUT) as r:
        if r.status_code != 200:
            r.read()
            try:
                return r.status_code, [r.json()]
            except Exception:
                return r.status_code, [r.text]
        event = None
        for line in r.iter_lines():
            if not line:
                continue
            if line.startswith("event:"):
                event = line[6:].strip()
                continue
            if line.startswith("data:"):
                d = line[5:].strip()
                if d == "[DONE]":
                    out.append("[DONE]")
                    continue
                try:
                    obj = json.loads(d)
                except Exception:
                    obj = d
                if event is not None and isinstance(obj, dict):
                    obj = {"__event__": event, **obj}
                out.append(obj)
            else:
                out.append({"__raw__": line})
    return r.status_code, out


def trim(x, n=700):
    s = json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x
    return s if len(s) <= n else s[:n] + f"...(+{len(s) - n})"


def both(path: str, body, n=700, label=None, raw=None, headers=None):
    """POST the same body to both servers and print a side-by-side summary."""
    print(f"=== {label or path}: {trim(body if raw is None else raw.decode(errors='replace'), 300)}")
    res = {}
    for s in ("vllm", "rose"):
        try:
            st, j, dt = post(s, path, body, raw=raw, headers=headers)
        except Exception as e:  # noqa: BLE001
            st, j, dt = -1, repr(e), 0
        res[s] = (st, j)
        print(f"  [{s}] {st} ({dt:.1f}s) {trim(j, n)}")
    sys.stdout.flush()
    return res


def keys(obj, prefix=""):
    """Flattened key paths of a JSON object (lists: first element, as [])."""
    out = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{prefix}.{k}" if prefix else k
            out.add(p)
            out |= keys(v, p)
    elif isinstance(obj, list) and obj:
        out |= keys(obj[0], prefix + "[]")
    return out


def keydiff(a, b, la="vllm", lb="rose"):
    ka, kb = keys(a), keys(b)
    return {f"only_{la}": sorted(ka - kb), f"only_{lb}": sorted(kb - ka)}


def text_of(j):
    try:
        c = j["choices"][0]
        if "message" in c:
            return c["message"].get("content")
        return c.get("text")
    except Exception:
        return None
