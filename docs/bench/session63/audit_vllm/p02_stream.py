"""Streaming chunk structure for /v1/completions and /v1/chat/completions, both servers."""
import json
from common import stream, MODEL

def strip(c):
    if not isinstance(c, dict):
        return c
    return {k: (strip(v) if isinstance(v, dict) else [strip(x) for x in v] if isinstance(v, list) else v)
            for k, v in c.items() if v is not None and k not in ("id", "created", "system_fingerprint")}

def show(label, path, body, full=False):
    print("===", label, json.dumps({k: v for k, v in body.items() if k not in ("model",)})[:300])
    for s in ("vllm", "rose"):
        st, chunks = stream(s, path, body)
        print(f"  [{s}] status {st}, {len(chunks)} events")
        ids = {c.get("id") for c in chunks if isinstance(c, dict)}
        print(f"  [{s}] distinct ids: {len(ids)}; objects: {sorted({c.get('object') for c in chunks if isinstance(c, dict)}, key=str)}")
        sel = chunks if full else (chunks[:3] + ["..."] + chunks[-3:] if len(chunks) > 6 else chunks)
        for c in sel:
            print(f"     {json.dumps(strip(c))[:400]}")

C = {"model": MODEL, "prompt": "The capital of France is", "max_tokens": 4, "temperature": 0, "stream": True}
show("comp stream plain", "/v1/completions", C, full=True)
show("comp stream include_usage", "/v1/completions", {**C, "stream_options": {"include_usage": True}})
show("comp stream continuous_usage_stats", "/v1/completions", {**C, "stream_options": {"include_usage": True, "continuous_usage_stats": True}})
show("comp stream logprobs", "/v1/completions", {**C, "logprobs": 1, "max_tokens": 2}, full=True)
show("comp stream echo", "/v1/completions", {**C, "echo": True, "max_tokens": 2}, full=True)
show("comp stream n=2 list prompt", "/v1/completions", {**C, "prompt": ["Hi", "Yo"], "n": 2, "temperature": 1.0, "seed": 1, "max_tokens": 2, "stream_options": {"include_usage": True}}, full=True)
show("comp stream stop", "/v1/completions", {**C, "stop": "."}, full=True)
M = {"model": MODEL, "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 4, "temperature": 0, "stream": True}
show("chat stream plain", "/v1/chat/completions", M, full=True)
show("chat stream include_usage", "/v1/chat/completions", {**M, "stream_options": {"include_usage": True}})
show("chat stream continuous_usage_stats", "/v1/chat/completions", {**M, "stream_options": {"include_usage": True, "continuous_usage_stats": True}})
show("chat stream logprobs", "/v1/chat/completions", {**M, "logprobs": True, "top_logprobs": 1, "max_tokens": 2}, full=True)
show("chat stream n=2", "/v1/chat/completions", {**M, "n": 2, "temperature": 1.0, "seed": 1, "max_tokens": 2, "stream_options": {"include_usage": True}}, full=True)
show("chat stream finish stop (eos)", "/v1/chat/completions", {**M, "max_tokens": 20}, full=False)
