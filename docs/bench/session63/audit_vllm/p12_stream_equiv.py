"""Streamed deltas joined == non-streamed text? And the finish chunk's shape, on both servers."""
import json
from common import post, stream, MODEL

def joined(chunks, chat):
    out = {}
    fin = {}
    lastchunk = {}
    for c in chunks:
        if not isinstance(c, dict) or not c.get("choices"):
            continue
        for ch in c["choices"]:
            i = ch["index"]
            piece = (ch.get("delta") or {}).get("content") if chat else ch.get("text")
            out[i] = out.get(i, "") + (piece or "")
            if ch.get("finish_reason"):
                fin[i] = ch["finish_reason"]
                lastchunk[i] = {k: v for k, v in ch.items() if v is not None and k not in ("logprobs",)}
    return out, fin, lastchunk

cases = [
    ("comp EOS end", "/v1/completions", {"prompt": "The capital of France is", "max_tokens": 40}),
    ("comp stop multi-token", "/v1/completions", {"prompt": "The capital of France is", "max_tokens": 16, "stop": "is: 2"}),
    ("comp stop two candidates", "/v1/completions", {"prompt": "The capital of France is", "max_tokens": 16, "stop": ["answer is", "The ans"]}),
    ("comp echo list prompts", "/v1/completions", {"prompt": ["The capital of France is", "1, 2, 3,"], "max_tokens": 4, "echo": True}),
    ("comp stream_interval 3", "/v1/completions", {"prompt": "Once upon a time", "max_tokens": 10, "stream_interval": 3}),
    ("chat EOS end", "/v1/chat/completions", {"messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 32}),
    ("chat stop multi-token", "/v1/chat/completions", {"messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 32, "stop": ["of France is"]}),
    ("chat min_tokens + stop", "/v1/chat/completions", {"messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 32, "stop": ["capital"], "min_tokens": 4}),
    ("chat json_object", "/v1/chat/completions", {"messages": [{"role": "user", "content": "Give JSON with key a"}], "max_tokens": 32, "response_format": {"type": "json_object"}}),
    ("chat stream_interval 4", "/v1/chat/completions", {"messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 10, "stream_interval": 4}),
]
for label, path, body in cases:
    chat = "chat" in path
    body = {"model": MODEL, "temperature": 0, **body}
    print("===", label)
    for s in ("vllm", "rose"):
        st, j, _ = post(s, path, body)
        if st != 200:
            print(f"  [{s}] {st} {j}"); continue
        texts = {c["index"]: (c["message"]["content"] if chat else c["text"]) for c in j["choices"]}
        fins = {c["index"]: c["finish_reason"] for c in j["choices"]}
        st2, ch = stream(s, path, {**body, "stream": True})
        sj, sf, last = joined(ch, chat)
        n_events = len([c for c in ch if isinstance(c, dict)])
        print(f"  [{s}] nonstream={json.dumps(texts)[:160]} fin={fins} | stream_equal={sj == texts} fin_equal={sf == fins} events={n_events} last={json.dumps(last)[:200]}")
        if sj != texts:
            print(f"        stream={json.dumps(sj)[:200]}")
