"""Seeded sampling: stream vs non-stream; min_tokens > max_tokens; prompt_logprobs + stream; logit_bias bad key;
temperature 1e-6; truncate_prompt_tokens -1; stop_token_ids + min_tokens."""
import json
from common import both, post, stream, MODEL
U = [{"role": "user", "content": "Tell me a story."}]
CH = {"model": MODEL, "messages": U, "max_tokens": 12, "temperature": 1.0, "seed": 11, "n": 2}
for s in ("vllm", "rose"):
    st, j, _ = post(s, "/v1/chat/completions", CH)
    ns = [c["message"]["content"] for c in sorted(j["choices"], key=lambda c: c["index"])]
    st, ch = stream(s, "/v1/chat/completions", {**CH, "stream": True})
    acc = {}
    for c in ch:
        if isinstance(c, dict):
            for x in c.get("choices", []):
                acc[x["index"]] = acc.get(x["index"], "") + (x["delta"].get("content") or "")
    print(f"[{s}] seeded n=2: stream == non-stream: {[acc.get(i) for i in range(2)] == ns}  {json.dumps(ns)[:200]}")
M = {"model": MODEL, "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 8, "temperature": 0}
both("/v1/chat/completions", {**M, "min_tokens": 10}, label="min_tokens > max_tokens", n=300)
both("/v1/chat/completions", {**M, "prompt_logprobs": 1, "stream": True}, label="prompt_logprobs + stream", n=300)
both("/v1/completions", {"model": MODEL, "prompt": "Hi", "max_tokens": 2, "temperature": 0, "logit_bias": {"abc": 1}}, label="logit_bias non-numeric key", n=300)
both("/v1/chat/completions", {**M, "temperature": 1e-6, "seed": 1}, label="temperature 1e-6", n=300)
both("/v1/chat/completions", {**M, "truncate_prompt_tokens": -1}, label="truncate_prompt_tokens -1", n=300)
both("/v1/chat/completions", {**M, "truncate_prompt_tokens": 5000}, label="truncate_prompt_tokens > max_model_len", n=300)
both("/v1/chat/completions", {**M, "stop_token_ids": [2], "min_tokens": 10, "max_tokens": 12}, label="stop_token_ids [eos] + min_tokens", n=400)
both("/v1/chat/completions", {**M, "max_tokens": 8, "stop": ["Paris"], "include_stop_str_in_output": False}, label="include_stop_str_in_output false", n=300)
both("/v1/chat/completions", {**M, "top_k": 0}, label="top_k 0", n=200)
both("/v1/chat/completions", {**M, "top_k": -1}, label="top_k -1", n=200)
both("/v1/chat/completions", {**M, "top_k": -2}, label="top_k -2", n=300)
both("/v1/chat/completions", {**M, "repetition_penalty": 0}, label="repetition_penalty 0", n=300)
both("/v1/chat/completions", {**M, "min_p": 1.5}, label="min_p 1.5", n=300)
