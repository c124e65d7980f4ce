"""Byte-fallback tokens in logprobs: chat `token`/`bytes`, completions `tokens`/`text_offset`, on both servers."""
import json
from common import post, MODEL
for s in ("vllm", "rose"):
    st, j, _ = post(s, "/v1/chat/completions", {"model": MODEL, "messages": [{"role": "user", "content": "Reply with just the emoji 🎉🎉"}], "max_tokens": 8, "temperature": 0, "logprobs": True, "top_logprobs": 1})
    c = j["choices"][0]
    print(f"[{s}] chat text={c['message']['content']!r}")
    print(f"      tokens={[ (t['token'], t['bytes']) for t in c['logprobs']['content']]}")
    st, j, _ = post(s, "/v1/completions", {"model": MODEL, "prompt": "Emoji party: 🎉🎉", "max_tokens": 6, "temperature": 0, "logprobs": 1})
    c = j["choices"][0]
    print(f"[{s}] comp text={c['text']!r} text_offset={c['logprobs']['text_offset']} tokens={c['logprobs']['tokens']} top={c['logprobs']['top_logprobs']}")
    print(f"      ''.join(tokens)==text: {''.join(c['logprobs']['tokens']) == c['text']}")
