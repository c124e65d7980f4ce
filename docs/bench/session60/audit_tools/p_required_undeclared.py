# parameters whose "required" names a property not in "properties" (no additionalProperties): JSON Schema
# requires that key (any value); does the call include it?
from common import *
F = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}}}
for seed in range(3):
    j = post("/v1/chat/completions", {"model": M, "messages": [{"role": "user", "content": "call f"}], "tools": [F], "tool_choice": "required",
         "parallel_tool_calls": False, "max_tokens": 60, "temperature": 0.8, "seed": seed}).json()
    print(j["choices"][0]["finish_reason"], [t["function"]["arguments"] for t in j["choices"][0]["message"].get("tool_calls") or []])
