import sys, httpx, subprocess, time
port = 18433
p = subprocess.Popen([sys.executable, "-m", "roseinfer.server", "--port", str(port), "--log-level", "warning",
                      "--model", "/tmp/s47/audit/tinysmol", "--dtype", "float32"])
try:
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200: break
        except httpx.HTTPError: time.sleep(0.5)
    schema = '{"type": "object", "properties": {"a": {"type": "number", "maximum": 1e999}}}'
    for field, body in [("json_schema", '{"prompt": "x", "json_schema": %s}' % schema),
                        ("guided_json", '{"prompt": "x", "guided_json": %s}' % schema),
                        ("response_format", '{"prompt": "x", "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": %s}}}' % schema),
                        ("structured_outputs", '{"prompt": "x", "structured_outputs": {"json": %s}}' % schema)]:
        r = httpx.post(f"http://127.0.0.1:{port}/v1/completions", content=body, headers={"Content-Type": "application/json"})
        print(field, r.status_code, r.json()["error"]["param"], r.json()["error"]["message"])
finally:
    p.terminate(); p.wait()
