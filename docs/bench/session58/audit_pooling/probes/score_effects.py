# score/rerank: truncate_prompt_tokens, truncation_side, max_tokens_per_doc change the scores as documented
import json, urllib.request
U = "http://127.0.0.1:18201"
def post(path, body):
    r = urllib.request.Request(U + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=60) as f: return f.status, json.load(f)
    except urllib.error.HTTPError as e: return e.code, json.load(e)
doc = "alpha beta gamma delta epsilon"
_, t = post("/tokenize", {"prompt": doc}); ids = t["tokens"]
def sc(body): s, d = post("/score", body); return s, [round(x["score"], 6) for x in d.get("data", [])] or d
print("plain        ", sc({"text_1": "alpha", "text_2": doc}))
print("trunc2 left  ", sc({"text_1": "alpha", "text_2": doc, "truncate_prompt_tokens": 2}))
print("trunc2 right ", sc({"text_1": "alpha", "text_2": doc, "truncate_prompt_tokens": 2, "truncation_side": "right"}))
_, e1 = post("/v1/embeddings", {"input": ["alpha"]}); _, e2 = post("/v1/embeddings", {"input": [ids[:2]]})
import math; a = e1["data"][0]["embedding"]; b = e2["data"][0]["embedding"]; print("expected right", round(sum(x*y for x, y in zip(a, b)), 6))
s, d = post("/rerank", {"query": "alpha", "documents": [doc], "max_tokens_per_doc": 2}); print("max_tokens_per_doc 2", s, round(d["results"][0]["relevance_score"], 6), d["usage"])
