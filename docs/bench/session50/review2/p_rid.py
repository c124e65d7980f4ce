import httpx, sys
for port in sys.argv[1:]:
    u=f"http://127.0.0.1:{port}/v1/completions"
    for hv in ["café".encode(), b"\xff\xfe", "日本".encode()]:
        r = httpx.post(u, json={"prompt":"x","max_tokens":1}, headers={"X-Request-Id": hv})
        print(port, hv, r.status_code, r.json().get("id"), r.headers.get("x-request-id"))
    r = httpx.post(u, json={"prompt":"x","max_tokens":2,"stream":True}, headers={"X-Request-Id": "日本".encode()})
    print(r.text[:160].replace("\n"," "))
