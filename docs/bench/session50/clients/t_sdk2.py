import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, json
from pydantic import BaseModel
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8880/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}}]
msgs = [{"role": "user", "content": "Weather in Paris?"}]
def run(name, f):
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:300])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:400])
def follow(m):
    return c.chat.completions.create(model=M, temperature=0, messages=msgs + [m, {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": "Sunny"}], tools=TOOLS, max_tokens=16).choices[0].message.content
def obj_create():
    return follow(c.chat.completions.create(model=M, messages=msgs, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48).choices[0].message)
def obj_parse():
    return follow(c.chat.completions.parse(model=M, messages=msgs, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48).choices[0].message)
def obj_stream():
    with c.chat.completions.stream(model=M, messages=msgs, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48) as s:
        for _ in s: pass
        return follow(s.get_final_completion().choices[0].message)
run("sdk_obj_create", obj_create)
run("sdk_obj_parse", obj_parse)
run("sdk_obj_stream", obj_stream)
