# n=3 under tools "auto", streamed: each choice opens once (role), before its deltas; calls vs text per choice
from common import *
import json
sysm = {"role": "system", "content": "Always answer by calling the tools. Call get_weather for every city mentioned."}
base = [sysm, {"role": "user", "content": "What's the weather in Paris and in Rome?"}]
body = {"model": M, "messages": base, "tools": [WEATHER, TIME], "tool_choice": "auto", "n": 3, "max_tokens": 60, "temperature": 0.9, "seed": 3, "stream": True, "stream_options": {"include_usage": True}}
st, lines = sse("/v1/chat/completions", body)
ch = [json.loads(l[6:]) for l in lines if l.startswith("data: {")]
per = {}
for c in ch:
    for x in c["choices"]: per.setdefault(x["index"], []).append(x)
for i, xs in sorted(per.items()):
    print(i, "opening:", xs[0]["delta"], "roles:", sum(1 for x in xs if "role" in x["delta"]), "calls:", sum(len(x["delta"].get("tool_calls") or []) for x in xs if any(t.get("id") for t in x["delta"].get("tool_calls") or [])),
          "finish:", [x["finish_reason"] for x in xs if x["finish_reason"]], "text:", repr("".join(x["delta"].get("content") or "" for x in xs))[:80])
print("usage:", ch[-1].get("usage"), "last:", lines[-1] if lines[-1] else lines[-2])
