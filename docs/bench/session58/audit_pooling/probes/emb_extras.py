# /v1/embeddings: normalize/use_activation, request_id, truncate_prompt_tokens edge values,
# truncation_side, messages form, usage counts, cache_salt, endianness with float
import json, math, urllib.request
U = "http://127.0.0.1:18201"
def post(path, body, headers={}):
    r = urllib.request.Request(U + path, json.dumps(body).encode(), {"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(r, timeout=60) as f: return f.status, json.load(f)
    except urllib.error.HTTPError as e: return e.code, json.load(e)
def norm(d): v = d["data"][0]["embedding"]; return round(math.sqrt(sum(x*x for x in v)), 4)
def short(d): return json.dumps(d)[:300]
s, d = post("/v1/embeddings", {"input": "hello", "normalize": False}); print("normalize false", s, norm(d))
s, d = post("/v1/embeddings", {"input": "hello", "use_activation": False}); print("use_activation false", s, norm(d))
s, d = post("/v1/embeddings", {"input": "hello", "request_id": "abc"}); print("request_id", s, d.get("id"))
s, d = post("/v1/embeddings", {"input": "hello"}, {"X-Request-Id": "hdr"}); print("X-Request-Id", s, d.get("id"))
for t in (0, -1, -2, 1, 100000):
    s, d = post("/v1/embeddings", {"input": "one two three four", "truncate_prompt_tokens": t}); print("truncate", t, s, d.get("usage") or short(d))
# truncation side: left keeps the last k tokens: same vector as embedding the last k ids
_, tok = post("/tokenize", {"prompt": "one two three four"}); ids = tok["tokens"]
_, a = post("/v1/embeddings", {"input": "one two three four", "truncate_prompt_tokens": 2})
_, b = post("/v1/embeddings", {"input": [ids[-2:]]})
_, c = post("/v1/embeddings", {"input": "one two three four", "truncate_prompt_tokens": 2, "truncation_side": "right"})
_, e = post("/v1/embeddings", {"input": [ids[:2]]})
diff = lambda x, y: max(abs(p - q) for p, q in zip(x["data"][0]["embedding"], y["data"][0]["embedding"]))
print("left==last2", diff(a, b), "right==first2", diff(c, e))
s, d = post("/v1/embeddings", {"messages": [{"role": "user", "content": "Hi"}]}); print("messages", s, d.get("usage") or short(d))
s, d = post("/v1/embeddings", {"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": True}); print("messages+agp", s, d.get("usage") or short(d))
s, d = post("/v1/embeddings", {"input": "hi", "cache_salt": ""}); print("cache_salt empty", s, short(d)[:160])
s, d = post("/v1/embeddings", {"input": "hi", "endianness": "big"}); print("endianness big + float", s, "data" in d)
s, d = post("/v1/embeddings", {"input": ["a", 1]}); print("mixed list", s, short(d)[:200])
s, d = post("/v1/embeddings", {"input": [[]]}); print("empty id list", s, short(d)[:200])
s, d = post("/v1/embeddings", {"input": [[1, 2], "a"]}); print("ids+str", s, short(d)[:200])
s, d = post("/v1/embeddings", {"input": [99999999]}); print("oov id", s, short(d)[:200])
s, d = post("/v1/embeddings", {"input": "hi", "model": None}); print("model null", s, "data" in d)
s, d = post("/v1/embeddings", {"input": "hi", "dimensions": None}); print("dimensions null", s, "data" in d)
