"""Raw message shapes with tools: auto answered in text, and required answered with a call (keys present, nulls)."""
import json
from common import post, MODEL
from p04_tools import TOOLS
B = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather in Paris?"}], "max_tokens": 48, "temperature": 0, "tools": TOOLS}
for label, extra in [("auto (text answer)", {}), ("required, parallel false (call)", {"tool_choice": "required", "parallel_tool_calls": False})]:
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/chat/completions", {**B, **extra})
        c = j["choices"][0]
        m = {k: (v if k != "content" else (v[:20] + "..." if isinstance(v, str) and len(v) > 20 else v)) for k, v in c["message"].items()}
        print(f"{label:34} [{s}] finish={c['finish_reason']} message={json.dumps(m)[:400]}")
