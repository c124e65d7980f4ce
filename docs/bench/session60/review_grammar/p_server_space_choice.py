"""Served, --reasoning-parser qwen3: choice [" yes", " no"] (answers that start with a space)."""
from server_util import *
with serve(18362, "qwen3") as http:
    think, close, nl = tid(http, "<think>"), tid(http, "</think>"), tid(http, "\n")
    for seed in range(4):
        for fmt in (None, "none"):
            body = {"messages": [{"role": "user", "content": "hi"}], "seed": seed, "temperature": 1.0,
                    "max_tokens": 30, "logit_bias": {str(think): 8, str(close): 10, str(nl): 6},
                    "structured_outputs": {"choice": [" yes", " no"]}}
            if fmt: body["reasoning_format"] = fmt
            j = http.post("/v1/chat/completions", json=body).json()
            ch = j["choices"][0]; msg = ch["message"]
            print(f"seed {seed} reasoning_format={fmt}: finish={ch['finish_reason']} content={msg.get('content')!r:.70} reasoning={str(msg.get('reasoning'))[-30:]!r}")
