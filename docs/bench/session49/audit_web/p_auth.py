import httpx
B = "http://127.0.0.1:18202"
c = httpx.Client(base_url=B, timeout=60)
U = {"messages":[{"role":"user","content":"hi"}],"max_tokens":2}
def s(label, r): print(f"== {label}: {r.status_code} {dict((k,v) for k,v in r.headers.items() if k.startswith('access-control') or k in ('www-authenticate','x-request-id'))} {r.text[:160]!r}")
for path, meth, body in [("/health","get",None),("/version","get",None),("/metrics","get",None),("/","get",None),("/docs","get",None),("/openapi.json","get",None),
                         ("/v1/models","get",None),("/v1/models/tinysmol","get",None),("/tokenize","post",{"prompt":"x"}),("/detokenize","post",{"tokens":[1]}),
                         ("/generate","post",{"prompt":"x","max_new_tokens":1}),("/v1/chat/completions","post",U),("/v1/completions","post",{"prompt":"x","max_tokens":1})]:
    r = getattr(c, meth)(path, **({"json":body} if body else {}))
    s(f"{meth.upper()} {path} no key", r)
s("chat good key", c.post("/v1/chat/completions", json=U, headers={"Authorization":"Bearer sekret"}))
s("chat second key", c.post("/v1/chat/completions", json=U, headers={"Authorization":"Bearer other"}))
s("chat combined key 'sekret,other'", c.post("/v1/chat/completions", json=U, headers={"Authorization":"Bearer sekret,other"}))
s("chat lowercase bearer", c.post("/v1/chat/completions", json=U, headers={"Authorization":"bearer sekret"}))
s("chat Basic", c.post("/v1/chat/completions", json=U, headers={"Authorization":"Basic sekret"}))
s("chat x-api-key header", c.post("/v1/chat/completions", json=U, headers={"x-api-key":"sekret"}))
s("chat wrong key + bad body", c.post("/v1/chat/completions", json={"foo":1}, headers={"Authorization":"Bearer bad"}))
s("chat no key + bad JSON", c.post("/v1/chat/completions", content=b"{", headers={"content-type":"application/json"}))
s("unknown route no key", c.get("/v1/nope"))
s("preflight good origin", c.options("/v1/chat/completions", headers={"Origin":"http://good.example","Access-Control-Request-Method":"POST","Access-Control-Request-Headers":"authorization,content-type"}))
s("preflight bad origin", c.options("/v1/chat/completions", headers={"Origin":"http://evil.example","Access-Control-Request-Method":"POST"}))
s("cors simple good origin w/ key", c.post("/v1/chat/completions", json=U, headers={"Origin":"http://good.example","Authorization":"Bearer sekret"}))
s("cors 401 good origin", c.post("/v1/chat/completions", json=U, headers={"Origin":"http://good.example"}))
s("x-request-id", c.post("/v1/chat/completions", json=U, headers={"Authorization":"Bearer sekret","X-Request-Id":"abc123"}))
s("text/plain content-type", c.post("/v1/chat/completions", content=b'{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}', headers={"Authorization":"Bearer sekret","content-type":"text/plain"}))
s("gzip encoding", c.post("/v1/chat/completions", content=b'{}', headers={"Authorization":"Bearer sekret","content-encoding":"gzip"}))
