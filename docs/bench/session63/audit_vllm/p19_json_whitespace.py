"""Why response_format json_object gives '{}' on roseinfer but an object on vLLM: the model's likeliest
tokens after '{' (logprobs are of the model's distribution, before the grammar mask)."""
import json
from common import post, MODEL
body = {"model": MODEL, "messages": [{"role": "user", "content": "What is the capital of France?"}], "max_tokens": 3,
        "temperature": 0, "response_format": {"type": "json_object"}, "logprobs": True, "top_logprobs": 5}
for s in ("vllm", "rose"):
    st, j, _ = post(s, "/v1/chat/completions", body)
    for t in j["choices"][0]["logprobs"]["content"]:
        print(f"[{s}] chose {t['token']!r:8} ({t['logprob']:.2f}); top: {[(x['token'], round(x['logprob'], 2)) for x in t['top_logprobs']]}")
for s in ("vllm", "rose"):
    st, j, _ = post(s, "/v1/chat/completions", {**body, "structured_outputs": {"json_object": True, "disable_any_whitespace": True}, "response_format": None, "logprobs": False, "top_logprobs": None, "max_tokens": 24})
    print(f"[{s}] structured_outputs json_object + disable_any_whitespace: {st} {json.dumps(j['choices'][0]['message']['content'] if st == 200 else j)[:200]}")
