# OpenAI's documented function-calling loop: input_list += response.output, then function_call_output
import json, openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}]
input_list = [{"role": "user", "content": "Weather in Paris?"}]
r = c.responses.create(model="SmolLM2-135M-Instruct", input=input_list, tools=tools, tool_choice="required", max_output_tokens=60, temperature=0, store=False)
input_list += r.output
for o in r.output:
    if o.type == "function_call":
        input_list.append({"type": "function_call_output", "call_id": o.call_id, "output": json.dumps({"t": "20C"})})
r2 = c.responses.create(model="SmolLM2-135M-Instruct", input=input_list, tools=tools, max_output_tokens=30, temperature=0, store=False)
print(r2.status, repr(r2.output_text))
# a text answer round-tripped too
r3 = c.responses.create(model="SmolLM2-135M-Instruct", input="hi", max_output_tokens=5, temperature=0, store=False)
r4 = c.responses.create(model="SmolLM2-135M-Instruct", input=[{"role": "user", "content": "hi"}, *r3.output, {"role": "user", "content": "again"}], max_output_tokens=5, temperature=0, store=False)
print(r4.status)
