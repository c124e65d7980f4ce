# An assistant message with two tool calls (c1, c2) followed by ONE tool result (c1) as the last message.
# OpenAI: 400 "An assistant message with 'tool_calls' must be followed by tool messages responding to each
# 'tool_call_id'. The following tool_call_ids did not have response messages: c2".
# README: "every call needs its result before the next message ... a 400 naming the call, as OpenAI's".
from common import *
U = [{"role": "user", "content": "What's the weather in Paris and Rome?"}]
asst = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
    {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]}
for label, msgs in [("ends after one of two results", U + [asst, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]),
                    ("same, then a user message", U + [asst, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}, {"role": "user", "content": "and?"}])]:
    r = post("/v1/chat/completions", {"model": M, "messages": msgs, "tools": [WEATHER], "max_tokens": 5, "temperature": 0})
    print("==", label, "->", r.status_code, (r.json().get("error") or {}).get("message"))
    if r.status_code == 200:
        t = post("/tokenize", {"model": M, "messages": msgs, "tools": [WEATHER]}).json()
        print("   prompt tail:", repr(post("/detokenize", {"model": M, "tokens": t["tokens"]}).json()["prompt"][-260:]))
# Responses API, the same shape
from openai import BadRequestError
try:
    r = client.responses.create(model=M, input=[{"role": "user", "content": "Weather in Paris and Rome?"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{\"city\": \"Rome\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"}],
        tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}],
        max_output_tokens=5, temperature=0)
    print("== responses, one of two outputs -> 200", r.status)
except BadRequestError as e:
    print("== responses, one of two outputs -> 400", e.message)
