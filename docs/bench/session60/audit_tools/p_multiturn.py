from common import *
import json
msgs = [{"role": "user", "content": "What's the weather in Paris?"}]
r = client.chat.completions.create(model=M, messages=msgs, tools=[WEATHER], tool_choice="required", parallel_tool_calls=False, max_tokens=60, temperature=0)
m = r.choices[0].message
show("turn1", m.model_dump())
msgs2 = msgs + [m.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": json.dumps({"temp_c": 21, "sky": "sunny"})}]
r2 = client.chat.completions.create(model=M, messages=msgs2, tools=[WEATHER], max_tokens=40, temperature=0)
show("turn2", {"finish": r2.choices[0].finish_reason, "content": r2.choices[0].message.content, "tc": r2.choices[0].message.tool_calls})
# rendered prompt via /tokenize
t = post("/tokenize", {"model": M, "messages": msgs2, "tools": [WEATHER], "return_token_strs": False})
print("tokenize status", t.status_code)
if t.status_code == 200:
    ids = t.json()["tokens"]; d = post("/detokenize", {"model": M, "tokens": ids}); print(d.json()["prompt"])
# error cases
cases = {
 "wrong tool_call_id": msgs + [m.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": "nope", "content": "x"}],
 "missing tool result": msgs + [m.model_dump(exclude_none=True), {"role": "user", "content": "hi"}],
 "tool without id": msgs + [m.model_dump(exclude_none=True), {"role": "tool", "content": "x"}],
 "tool result twice": msgs2 + [{"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": "y"}],
 "assistant tc bad json args": msgs + [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{not json"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
 "assistant tc unknown fn": msgs + [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "nope", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
 "assistant tc args array": msgs + [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "[1]"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
 "tool content as parts": msgs + [m.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": m.tool_calls[0].id, "content": [{"type": "text", "text": "sunny"}]}],
 "dup call ids": msgs + [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}, {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "x"}],
 "tool msg with name": msgs + [m.model_dump(exclude_none=True), {"role": "tool", "tool_call_id": m.tool_calls[0].id, "name": "wrong_name", "content": "x"}],
}
for k, ms in cases.items():
    rr = post("/v1/chat/completions", {"model": M, "messages": ms, "tools": [WEATHER], "max_tokens": 5, "temperature": 0})
    j = rr.json()
    show(k, (rr.status_code, j.get("error", {}).get("message", "")[:200], j.get("error", {}).get("param")) if rr.status_code != 200 else (200, j["choices"][0]["message"]))
# history with tool_calls but no tools in request
rr = post("/v1/chat/completions", {"model": M, "messages": msgs2, "max_tokens": 5, "temperature": 0})
show("history with calls, no tools", (rr.status_code, rr.text[:300]))
