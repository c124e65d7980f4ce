import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=120)
with c.stream("POST", B+"/v1/completions", json={"prompt": "x", "max_tokens": 5, "stream": True, "structured_outputs": {"choice": [f"w{i}" for i in range(60000)]}}) as r:
    print("stream 60000 choices:", r.status_code, r.read().decode()[:400])
a = [c.post(B+"/v1/completions", json={"prompt": "x", "max_tokens": 8}).json()["choices"][0]["text"] for _ in range(3)]
print("default temperature samples differ:", len(set(a)) > 1, a)
g = [c.post(B+"/v1/completions", json={"prompt": "x", "max_tokens": 8, "temperature": 0}).json()["choices"][0]["text"] for _ in range(2)]
print("temp 0 same:", g[0] == g[1])
r = c.post(B+"/v1/completions", json={"prompt": "x", "max_tokens": 3, "stream": True, "logprobs": 1})
print("compl stream logprobs:", r.text[:300])
r = c.post(B+"/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], "max_tokens": 2, "stream": True, "logprobs": True, "top_logprobs": 1})
print("chat stream logprobs:", r.text[:400])
