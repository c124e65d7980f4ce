"""Tool calling: tools with tool_choice auto / required / named / none, parallel_tool_calls, streaming."""
import json
from common import both, stream, MODEL

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
         {"type": "function", "function": {"name": "get_time", "description": "Get the current time in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
B = {"model": MODEL, "messages": [{"role": "user", "content": "What is the weather in Paris?"}], "max_tokens": 48, "temperature": 0, "tools": TOOLS}

def msg(r):
    st, j = r
    if st != 200:
        return st, j
    c = j["choices"][0]
    return st, {"finish_reason": c["finish_reason"], "message": {k: v for k, v in c["message"].items() if v not in (None, [])}, "usage": j["usage"]}

def main():
  for label, extra in [("auto", {"tool_choice": "auto"}), ("default (no tool_choice)", {}), ("required", {"tool_choice": "required"}),
                       ("named", {"tool_choice": {"type": "function", "function": {"name": "get_time"}}}), ("none", {"tool_choice": "none"}),
                       ("required parallel false", {"tool_choice": "required", "parallel_tool_calls": False}),
                       ("named unknown fn", {"tool_choice": {"type": "function", "function": {"name": "nope"}}})]:
      r = both("/v1/chat/completions", {**B, **extra}, label=f"tools {label}", n=200)
      for s in ("vllm", "rose"):
          print(f"    {s}: {json.dumps(msg(r[s]))[:900]}")

  print("=== streaming, tool_choice required")
  for s in ("vllm", "rose"):
      st, chunks = stream(s, "/v1/chat/completions", {**B, "tool_choice": "required", "stream": True})
      print(f"  [{s}] {st} {len(chunks)} events")
      for c in chunks[:4] + ["..."] + chunks[-3:]:
          if isinstance(c, dict):
              c = {k: v for k, v in c.items() if k in ("choices", "usage", "error")}
          print("     ", json.dumps(c)[:400])
  print("=== streaming, named")
  for s in ("vllm", "rose"):
      st, chunks = stream(s, "/v1/chat/completions", {**B, "tool_choice": {"type": "function", "function": {"name": "get_time"}}, "stream": True})
      print(f"  [{s}] {st} {len(chunks)} events")
      for c in chunks[:4] + ["..."] + chunks[-3:]:
          if isinstance(c, dict):
              c = {k: v for k, v in c.items() if k in ("choices", "usage", "error")}
          print("     ", json.dumps(c)[:400])


if __name__ == "__main__":
    main()
