"""tool_choice=required (parallel calls allowed): roseinfer answers one complete call with finish_reason
"length"; what did the rest of the tokens hold? (logprobs show the raw tokens)"""
import json
from common import post, MODEL
from p04_tools import TOOLS
B = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather in Paris?"}], "temperature": 0, "tools": TOOLS, "tool_choice": "required", "logprobs": True}
for mt in (48, 128):
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/chat/completions", {**B, "max_tokens": mt})
        c = j["choices"][0]
        toks = "".join(t["token"] for t in (c.get("logprobs") or {}).get("content") or [])
        print(f"[{s}] max_tokens={mt} finish={c['finish_reason']} usage={j['usage']['completion_tokens']} calls={json.dumps(c['message'].get('tool_calls'))[:300]}")
        print(f"      raw tokens: {json.dumps(toks)[:600]}")
