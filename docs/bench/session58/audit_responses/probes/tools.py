import json, openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
tools = [{"type": "function", "name": "get_weather", "description": "weather of a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}]
r = c.responses.create(model="SmolLM2-135M-Instruct", input="Weather in Paris and in Rome?", tools=tools,
                       tool_choice="required", max_output_tokens=120, temperature=0)
print(r.status, [(o.type, getattr(o, "name", None), getattr(o, "arguments", None), o.status) for o in r.output])
print("tools echo", r.tools)
r2 = c.responses.create(model="SmolLM2-135M-Instruct", input="Weather in Paris and in Rome?", tools=tools,
                       tool_choice="required", parallel_tool_calls=False, max_output_tokens=120, temperature=0)
print("parallel false:", r2.parallel_tool_calls, [(o.type, getattr(o, "arguments", None)) for o in r2.output])
call = [o for o in r.output if o.type == "function_call"][0]
r3 = c.responses.create(model="SmolLM2-135M-Instruct", previous_response_id=r.id, tools=tools,
        input=[{"type": "function_call_output", "call_id": o.call_id, "output": "sunny 20C"} for o in r.output if o.type=="function_call"],
        max_output_tokens=40, temperature=0)
print("continued:", r3.status, repr(r3.output_text))
# streamed function call events
s = c.responses.create(model="SmolLM2-135M-Instruct", input="Weather in Paris?", tools=tools,
                       tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=60, temperature=0, stream=True)
for e in s:
    d = e.model_dump()
    print(" ", d["sequence_number"], e.type, {k: d[k] for k in ("output_index", "item_id", "delta", "arguments", "name") if k in d}, d.get("item", {}).get("type") if "item" in d else "")
