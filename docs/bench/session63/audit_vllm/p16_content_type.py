"""Content-Type handling: none, form (curl -d default), json with charset, and X-Request-Id echo."""
import json, httpx
from common import PORTS, MODEL
body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": 0}).encode()
for label, headers in [("no Content-Type", {}), ("application/x-www-form-urlencoded (curl -d)", {"Content-Type": "application/x-www-form-urlencoded"}),
                       ("application/json; charset=utf-8", {"Content-Type": "application/json; charset=utf-8"}),
                       ("X-Request-Id header", {"Content-Type": "application/json", "X-Request-Id": "req-42"})]:
    print("===", label)
    for s in ("vllm", "rose"):
        r = httpx.post(f"http://127.0.0.1:{PORTS[s]}/v1/chat/completions", content=body, headers=headers, timeout=60)
        rid = r.headers.get("x-request-id")
        try:
            j = r.json(); summary = j.get("id") or j.get("error")
        except Exception:
            summary = r.text[:200]
        print(f"  [{s}] {r.status_code} x-request-id={rid} {json.dumps(summary)[:250]}")
