from common import *
from typing import Literal, Optional, List
from enum import Enum
from pydantic import BaseModel, Field
import openai
class Color(str, Enum):
    red = "red"; blue = "blue"
class Addr(BaseModel):
    city: str
    zip: str
class Person(BaseModel):
    name: str
    age: int
    color: Color
    kind: Literal["a", "b"]
    addr: Addr
    nick: Optional[str]
    tags: List[str]
msgs = [{"role": "user", "content": "Make up a person."}]
try:
    r = client.chat.completions.parse(model=M, messages=msgs, response_format=Person, max_tokens=200, temperature=0)
    m = r.choices[0].message
    show("parse()", {"finish": r.choices[0].finish_reason, "parsed": m.parsed.model_dump() if m.parsed else None, "refusal": m.refusal})
except Exception as e:
    show("parse() ERROR", repr(e))
# parse with pydantic_function_tool
class GetWeather(BaseModel):
    city: str
    unit: Literal["c", "f"]
try:
    r = client.chat.completions.parse(model=M, messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[openai.pydantic_function_tool(GetWeather)], tool_choice="required", parallel_tool_calls=False, max_tokens=80, temperature=0)
    m = r.choices[0].message
    show("parse() tools", {"finish": r.choices[0].finish_reason, "tc": [(t.function.name, t.function.arguments, t.function.parsed_arguments) for t in m.tool_calls]})
except Exception as e:
    show("parse() tools ERROR", repr(e))
# stream helper with response_format
try:
    with client.chat.completions.stream(model=M, messages=msgs, response_format=Person, max_tokens=200, temperature=0,
                                        stream_options={"include_usage": True}) as s:
        evs = []
        for ev in s:
            evs.append(ev.type)
        fc = s.get_final_completion()
    show("stream() rf", {"events": sorted(set(evs)), "parsed": fc.choices[0].message.parsed, "usage": fc.usage})
except Exception as e:
    show("stream() rf ERROR", repr(e))
try:
    with client.chat.completions.stream(model=M, messages=[{"role": "user", "content": "Weather in Paris and Rome?"}],
        tools=[openai.pydantic_function_tool(GetWeather)], tool_choice="required", max_tokens=120, temperature=0) as s:
        evs = []
        for ev in s:
            evs.append(ev.type)
            if ev.type == "tool_calls.function.arguments.done":
                print("  args.done:", ev.name, ev.index, ev.arguments, ev.parsed_arguments)
        fc = s.get_final_completion()
    show("stream() tools", {"events": sorted(set(evs)), "finish": fc.choices[0].finish_reason,
        "tc": [(t.id, t.function.name, t.function.parsed_arguments) for t in fc.choices[0].message.tool_calls]})
except Exception as e:
    show("stream() tools ERROR", repr(e))
# responses.parse
try:
    r = client.responses.parse(model=M, input="Make up a person.", text_format=Person, max_output_tokens=200, temperature=0)
    show("responses.parse", {"status": r.status, "parsed": r.output_parsed})
except Exception as e:
    show("responses.parse ERROR", repr(e))
try:
    r = client.responses.create(model=M, input="Weather in Paris?", tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}],
                                tool_choice="required", max_output_tokens=80, temperature=0)
    show("responses tools", [o.model_dump() for o in r.output])
except Exception as e:
    show("responses tools ERROR", repr(e))
