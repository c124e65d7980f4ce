from common import *
import json
FN = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}
FN2 = {"type": "function", "name": "get_time", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}
for ptc in [True, False]:
    r = client.responses.create(model=M, input="Weather in Paris and Rome?", tools=[FN, FN2], tool_choice="required", parallel_tool_calls=ptc, max_output_tokens=100, temperature=0)
    show(f"responses ptc={ptc}", {"status": r.status, "ptc_echo": r.parallel_tool_calls, "out": [(o.type, getattr(o, "name", None), getattr(o, "arguments", None)) for o in r.output]})
# stream events
evs = []
with client.responses.stream(model=M, input="Weather in Paris?", tools=[FN], tool_choice="required", parallel_tool_calls=False, max_output_tokens=60, temperature=0) as s:
    for e in s:
        evs.append(e.type)
    fr = s.get_final_response()
show("responses stream tool events", {"types": list(dict.fromkeys(evs)), "final": [(o.type, getattr(o, "arguments", None)) for o in fr.output]})
# follow-up with function_call_output
call = fr.output[0]
r2 = client.responses.create(model=M, input=[{"role": "user", "content": "Weather in Paris?"}, {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
                                            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21C"}], tools=[FN], max_output_tokens=30, temperature=0)
show("responses follow-up", {"status": r2.status, "text": r2.output_text})
r3 = client.responses.create(model=M, input="Weather in Paris?", tools=[FN], tool_choice="required", parallel_tool_calls=False, max_output_tokens=60, temperature=0, store=True)
r4 = client.responses.create(model=M, previous_response_id=r3.id, input=[{"type": "function_call_output", "call_id": r3.output[0].call_id, "output": "sunny"}], tools=[FN], max_output_tokens=30, temperature=0)
show("responses previous_response_id follow-up", {"status": r4.status, "text": r4.output_text})
# text.format json_schema streamed
evs = []
with client.responses.stream(model=M, input="A cat as JSON", max_output_tokens=60, temperature=0,
    text={"format": {"type": "json_schema", "name": "cat", "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}, "strict": True}}) as s:
    for e in s: evs.append(e.type)
show("responses stream json_schema (incomplete by max_output_tokens: response.incomplete, see p_responses2)", {"types": list(dict.fromkeys(evs))})
# responses stream_options include_usage
rr = post("/v1/responses", {"model": M, "input": "hi", "stream": True, "stream_options": {"include_usage": True}, "max_output_tokens": 5})
show("responses stream_options.include_usage", (rr.status_code, rr.text[:300]))
# cut mid-call in responses
r5 = client.responses.create(model=M, input="Weather in Paris?", tools=[FN], tool_choice="required", max_output_tokens=12, temperature=0)
show("responses cut mid call", {"status": r5.status, "incomplete": r5.incomplete_details, "out": [o.model_dump() for o in r5.output]})
