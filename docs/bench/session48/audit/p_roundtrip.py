import openai, json, httpx
c = openai.OpenAI(base_url="http://127.0.0.1:18401/v1", api_key="x")
msgs = [{"role": "user", "content": "hi"}]
r = c.chat.completions.create(model="tinysmol", messages=msgs, max_tokens=3)
m = r.choices[0].message
print("dump keys", m.model_dump())
# pattern 1: append the object itself
try:
    r2 = c.chat.completions.create(model="tinysmol", messages=msgs + [m, {"role": "user", "content": "again"}], max_tokens=3)
    print("append object OK")
except Exception as e: print("append object:", type(e).__name__, str(e)[:300])
# pattern 2: model_dump()
try:
    r2 = c.chat.completions.create(model="tinysmol", messages=msgs + [m.model_dump(), {"role": "user", "content": "again"}], max_tokens=3)
    print("model_dump OK")
except Exception as e: print("model_dump:", type(e).__name__, str(e)[:300])
# pattern 2b: model_dump(exclude_none=True)
try:
    r2 = c.chat.completions.create(model="tinysmol", messages=msgs + [m.model_dump(exclude_none=True), {"role": "user", "content": "again"}], max_tokens=3)
    print("model_dump exclude_none OK")
except Exception as e: print("model_dump exclude_none:", type(e).__name__, str(e)[:300])
# tool calls round trip
f = {"type": "function", "function": {"name": "noparams"}}
r = c.chat.completions.create(model="tinysmol", messages=msgs, tools=[f], tool_choice="required", max_tokens=40)
m = r.choices[0].message
print("tool msg dump", m.model_dump())
for label, mm in [("object", m), ("dump", m.model_dump()), ("dump excl none", m.model_dump(exclude_none=True))]:
    try:
        c.chat.completions.create(model="tinysmol", messages=msgs + [mm, {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": "ok"}], tools=[f], max_tokens=3)
        print("tool roundtrip", label, "OK")
    except Exception as e: print("tool roundtrip", label, type(e).__name__, str(e)[:250])
# streamed tool call accumulated with index
s = c.chat.completions.create(model="tinysmol", messages=msgs, tools=[f], tool_choice="required", max_tokens=40, stream=True)
calls = {}
for ch in s:
    for tc in (ch.choices[0].delta.tool_calls or []) if ch.choices else []:
        d = calls.setdefault(tc.index, {"index": tc.index, "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
        if tc.id: d["id"] = tc.id
        if tc.function and tc.function.name: d["function"]["name"] = tc.function.name
        if tc.function and tc.function.arguments: d["function"]["arguments"] += tc.function.arguments
print("accumulated", list(calls.values()))
try:
    c.chat.completions.create(model="tinysmol", messages=msgs + [{"role": "assistant", "tool_calls": list(calls.values())}, {"role": "tool", "tool_call_id": calls[0]["id"], "content": "ok"}], tools=[f], max_tokens=3)
    print("stream-accumulated roundtrip OK")
except Exception as e: print("stream-accumulated with index:", type(e).__name__, str(e)[:250])
