# MEDIUM: a template whose generation prompt opens <think> (QwQ, Qwen3-*-Thinking-2507, Qwen3.5:
# '<|im_start|>assistant\n<think>\n'; '<think>\n\n</think>\n\n' when enable_thinking is false)
# is read right by neither parser in both modes: qwen3 leaks the thinking and '</think>' into
# content with thinking on; deepseek_r1 reads the whole answer as thinking with it off.
# (vLLM's qwen3 and llama.cpp's auto read both modes: the prompt decides.)
# Servers: 18332 --reasoning-parser qwen3, 18333 deepseek_r1, both --chat-template qwen35_like.jinja.
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
import httpx
from common import words, parse
for port, name in ((18332, "qwen3"), (18333, "deepseek_r1")):
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as h:
        for kw in ({}, {"enable_thinking": False}):
            msgs = [{"role": "user", "content": "Q"}]
            prompt = h.post("/tokenize", json={"messages": msgs, "chat_template_kwargs": kw, "return_token_strs": True}).json()
            body = {"messages": msgs, "seed": 9, "temperature": 1.0, "max_tokens": 10,
                    "allowed_token_ids": words(h), "chat_template_kwargs": kw}
            raw = h.post("/v1/chat/completions", json={**body, "reasoning_format": "none"}).json()["choices"][0]["message"]["content"]
            m = h.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
            print(f"{name} chat_template_kwargs={kw}: output {raw!r}")
            print(f"    got reasoning={m.get('reasoning')!r} content={m['content']!r}")
