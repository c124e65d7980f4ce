"""Shared helpers for the probes (servers: 18330 deepseek_r1, 18331 qwen3)."""
import json, httpx
from roseinfer.output.reasoning import ReasoningParser

URL = {"deepseek_r1": "http://127.0.0.1:18330", "qwen3": "http://127.0.0.1:18331"}

def client(name):
    return httpx.Client(base_url=URL[name], timeout=120)

def tok(http, text):
    return http.post("/tokenize", json={"prompt": text, "add_special_tokens": False}).json()["tokens"]

def words(http):
    return [tok(http, t)[0] for t in ("<think>", "</think>", "a", " b")]

def parse(name, text):
    p = ReasoningParser(name); r, a = p.feed(text, True)
    return (r if p.thought else None), a

def sse(text):
    return [json.loads(l[6:]) for l in text.splitlines() if l.startswith("data: {")]

def join_chat(events, idx=0):
    out = {}
    for e in events:
        for c in e.get("choices", []):
            if c["index"] != idx: continue
            d = c["delta"]
            for k in ("content", "reasoning", "reasoning_content"):
                if d.get(k) is not None:
                    out[k] = out.get(k, "") + d[k]
            if c.get("finish_reason"): out["finish_reason"] = c["finish_reason"]
    return out

def base(http, seed, **extra):
    return {"messages": [{"role": "user", "content": "Think, then answer."}], "seed": seed,
            "temperature": 1.0, "max_tokens": 10, "allowed_token_ids": words(http), **extra}
