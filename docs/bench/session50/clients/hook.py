"""Log every HTTP request body and the response status (and body for errors / non-streams)."""
import json, os, httpx, httpx2
LOG = os.environ.get("HOOKLOG", "/tmp/s50/clients/logs/http.jsonl")
def _rec(d):
    with open(LOG, "a") as f: f.write(json.dumps(d) + "\n")
_tag = {"t": ""}
def tag(t): _tag["t"] = t
def _req(request):
    try: body = json.loads(request.content or b"null")
    except Exception: body = (request.content or b"")[:2000].decode("utf8", "replace")
    return body
_orig_send = httpx.Client.send
def send(self, request, *a, **k):
    r = _orig_send(self, request, *a, **k)
    d = {"tag": _tag["t"], "url": str(request.url), "req": _req(request), "status": r.status_code}
    if r.status_code >= 400 or not k.get("stream"):
        try: r.read(); d["resp"] = r.text[:3000]
        except Exception as e: d["resp_err"] = repr(e)
    _rec(d); return r
httpx.Client.send = send
_orig_asend = httpx.AsyncClient.send
async def asend(self, request, *a, **k):
    r = await _orig_asend(self, request, *a, **k)
    d = {"tag": _tag["t"], "url": str(request.url), "req": _req(request), "status": r.status_code}
    if r.status_code >= 400 or not k.get("stream"):
        try: await r.aread(); d["resp"] = r.text[:3000]
        except Exception as e: d["resp_err"] = repr(e)
    _rec(d); return r
httpx.AsyncClient.send = asend
def _patch(mod):
    o, ao = mod.Client.send, mod.AsyncClient.send
    def s(self, request, *a, **k):
        r = o(self, request, *a, **k)
        d = {"tag": _tag["t"], "url": str(request.url), "req": _req(request), "status": r.status_code}
        if r.status_code >= 400 or not k.get("stream"):
            try: r.read(); d["resp"] = r.text[:3000]
            except Exception as e: d["resp_err"] = repr(e)
        _rec(d); return r
    async def a_(self, request, *a, **k):
        r = await ao(self, request, *a, **k)
        d = {"tag": _tag["t"], "url": str(request.url), "req": _req(request), "status": r.status_code}
        if r.status_code >= 400 or not k.get("stream"):
            try: await r.aread(); d["resp"] = r.text[:3000]
            except Exception as e: d["resp_err"] = repr(e)
        _rec(d); return r
    mod.Client.send, mod.AsyncClient.send = s, a_
_patch(httpx2)
