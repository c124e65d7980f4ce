import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=120)
spec = c.get(B+"/openapi.json").json()
for path, ops in spec["paths"].items():
    for method, op in ops.items():
        if method != "post": print(method.upper(), path); continue
        rb = op.get("requestBody", {}).get("content", {})
        ex = None
        for ct, v in rb.items():
            ex = v.get("example") or v.get("examples")
            sch = v.get("schema", {})
            if ex is None and "$ref" in sch:
                name = sch["$ref"].split("/")[-1]
                s = spec["components"]["schemas"][name]
                ex = s.get("example") or s.get("examples")
        if isinstance(ex, dict) and all(isinstance(v, dict) and "value" in v for v in ex.values()):
            exs = {k: v["value"] for k, v in ex.items()}
        elif isinstance(ex, list): exs = {i: e for i, e in enumerate(ex)}
        else: exs = {0: ex}
        for k, e in exs.items():
            if e is None: print("POST", path, "NO EXAMPLE"); continue
            r = c.post(B+path, json=e)
            print("POST", path, k, r.status_code, r.text[:150].replace("\n", " "))
print("security", spec.get("components", {}).get("securitySchemes"))
