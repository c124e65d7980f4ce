"""Odds and ends: empty stop string, user non-string, service_tier echo, logprobs on echo top, n>1 + best_of, suffix '',
chat logprobs + stop (do logprobs keep the stop tokens?), usage of chat logprobs with n=2, assistant prefill via continue_final_message + echo."""
import json
from common import both, post, MODEL
U = [{"role": "user", "content": "What is the capital of France?"}]
CH = {"model": MODEL, "messages": U, "max_tokens": 8, "temperature": 0}
CO = {"model": MODEL, "prompt": "The capital of France is", "max_tokens": 8, "temperature": 0}
both("/v1/chat/completions", {**CH, "stop": ""}, label="chat stop ''", n=300)
both("/v1/chat/completions", {**CH, "stop": ["", "Paris"]}, label="chat stop ['', 'Paris']", n=300)
both("/v1/chat/completions", {**CH, "user": 5}, label="user 5 (int)", n=300)
r = both("/v1/chat/completions", {**CH, "service_tier": "default"}, label="service_tier echo", n=100)
for s in r:
    print(f"   {s} service_tier in response: {r[s][1].get('service_tier', '<absent>') if isinstance(r[s][1], dict) else None}")
both("/v1/completions", {**CO, "suffix": ""}, label="suffix ''", n=300)
both("/v1/completions", {**CO, "n": 2, "best_of": 2, "temperature": 0.8, "seed": 1}, label="best_of == n", n=300)
for s in ("vllm", "rose"):
    st, j, _ = post(s, "/v1/chat/completions", {**CH, "stop": ["France"], "logprobs": True})
    c = j["choices"][0]
    print(f"[{s}] chat stop+logprobs: text={c['message']['content']!r} logprob tokens={[t['token'] for t in c['logprobs']['content']]} usage={j['usage']['completion_tokens']}")
both("/v1/chat/completions", {**CH, "messages": [{"role": "system", "content": "Be brief."}, {"role": "system", "content": "Be kind."}] + U}, label="two system messages", n=300)
both("/v1/chat/completions", {**CH, "messages": U + [{"role": "user", "content": "And Spain?"}]}, label="two user messages in a row", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "assistant", "content": "Hello"}]}, label="assistant-only conversation", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "user", "content": ""}]}, label="empty user content", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "user", "content": []}]}, label="empty content list", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}, label="content part type input_text (Responses-style) in chat", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?", "cache_control": {"type": "ephemeral"}}]}]}, label="text part with cache_control (Anthropic-style extra key)", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "user", "content": "Hi", "extra_key": 1}]}, label="unknown key in message", n=300)
both("/v1/chat/completions", {**CH, "messages": [{"role": "tool", "tool_call_id": "x", "content": "sunny"}]}, label="tool message without preceding assistant call", n=300)
both("/v1/chat/completions", {**CH, "logprobs": False, "top_logprobs": 0}, label="logprobs false, top_logprobs 0", n=200)
both("/v1/completions", {**CO, "logprobs": None}, label="logprobs null", n=200)
both("/v1/completions", {**CO, "logprobs": True}, label="logprobs true on completions (bool)", n=300)
both("/v1/completions", {**CO, "echo": True, "prompt": ["Hi", "Yo"], "max_tokens": 1, "logprobs": 0}, label="echo list prompts logprobs", n=300)
both("/v1/chat/completions", {**CH, "stream": False, "stream_options": None}, label="stream false + stream_options null", n=150)
both("/v1/chat/completions", {**CH, "n": 129, "temperature": 1, "max_tokens": 1}, label="n=129", n=300)
