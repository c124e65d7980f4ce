# llama.cpp /embedding: shape, embd_normalize, vs /v1/embeddings
import json, math, urllib.request
U = "http://127.0.0.1:18201"
def post(path, body):
    r = urllib.request.Request(U + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=60) as f: return f.status, json.load(f)
    except urllib.error.HTTPError as e: return e.code, json.load(e)
s, d = post("/embedding", {"content": "hello world"})
print(s, type(d).__name__, [sorted(x) for x in d], len(d[0]["embedding"]), len(d[0]["embedding"][0]))
v = d[0]["embedding"][0]; print("norm", math.sqrt(sum(x*x for x in v)))
_, o = post("/v1/embeddings", {"input": "hello world"})
print("same as /v1", max(abs(a-b) for a, b in zip(v, o["data"][0]["embedding"])))
for n in (-1, 0, 1):
    s, d = post("/embedding", {"content": "hello world", "embd_normalize": n}); v = d[0]["embedding"][0]
    print(n, s, "max|x|", max(abs(x) for x in v), "sum|x|", sum(abs(x) for x in v))
s, d = post("/embedding", {"content": ["a", "b"]}); print("two", s, [x["index"] for x in d])
s, d = post("/embeddings", {"input": "a"}); print("/embeddings input", s, type(d).__name__)
s, d = post("/embedding", {"content": "a", "encoding_format": "base64"}); print("encoding_format", s, str(d)[:200])
