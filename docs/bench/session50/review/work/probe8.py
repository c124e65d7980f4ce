import httpx
U = "http://127.0.0.1:18901"
def post(b):
    r = httpx.post(U + "/v1/completions", json=b, timeout=60); print(r.status_code, r.text[:300])
post({"prompt": "score this", "echo": True, "max_tokens": 0, "min_tokens": 2})
post({"prompt": "score this", "echo": True, "max_tokens": 0, "logprobs": 0, "stop": ["x"]})
post({"prompt": [1]*2048, "echo": True, "max_tokens": 0})
post({"prompt": [1]*2047, "echo": True, "max_tokens": 0})
post({"prompt": "a", "echo": True, "max_completion_tokens": 0})
post({"prompt": "a", "echo": True, "n_predict": 0})
