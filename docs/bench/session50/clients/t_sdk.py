import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, json
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8880/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
msgs = [{"role": "user", "content": "Weather in Paris?"}]
def run(name, f):
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:400])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:500])
r = c.chat.completions.create(model=M, messages=msgs, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48)
m = r.choices[0].message
print(m.model_dump())
for mode, dump in [("model_dump", m.model_dump()), ("model_dump_json", json.loads(m.model_dump_json())), ("to_dict", m.to_dict() if hasattr(m, "to_dict") else m.model_dump(exclude_unset=True))]:
    run("sdk_roundtrip_" + mode, lambda: c.chat.completions.create(model=M, messages=msgs + [dump, {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": "Sunny"}], tools=TOOLS, max_tokens=16).choices[0].message.content)
# streamed then accumulated via the SDK's stream helper
def stream_helper():
    with c.chat.completions.stream(model=M, messages=msgs, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=48) as s:
        for _ in s: pass
        fm = s.get_final_completion().choices[0].message
    d = fm.model_dump()
    print("   stream-final dump:", d)
    return c.chat.completions.create(model=M, messages=msgs + [d, {"role": "tool", "tool_call_id": fm.tool_calls[0].id, "content": "Sunny"}], tools=TOOLS, max_tokens=16).choices[0].message.content
run("sdk_stream_helper_roundtrip", stream_helper)
from pydantic import BaseModel
class W(BaseModel):
    city: str
run("sdk_parse", lambda: c.chat.completions.parse(model=M, messages=msgs, response_format=W, max_tokens=32).choices[0].message.parsed)
run("sdk_parse_tools_required", lambda: c.chat.completions.parse(model=M, messages=msgs, response_format=W, tools=TOOLS, tool_choice="required", max_tokens=32).choices[0].message)
run("sdk_json_object_required", lambda: c.chat.completions.create(model=M, messages=msgs, response_format={"type": "json_object"}, tools=TOOLS, tool_choice="required", max_tokens=32).choices[0].message)
run("sdk_text_required", lambda: c.chat.completions.create(model=M, messages=msgs, response_format={"type": "text"}, tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=32).choices[0].message.tool_calls)
run("sdk_default_model_name", lambda: c.chat.completions.create(model="gpt-4o-mini", messages=msgs, max_tokens=4))
run("sdk_max_completion_tokens_stream_usage", lambda: [ch.usage for ch in c.chat.completions.create(model=M, messages=msgs, max_completion_tokens=4, stream=True, stream_options={"include_usage": True, "include_obfuscation": False})][-1])
