import json, openai
from enum import Enum
from typing import Optional
from pydantic import BaseModel
from openai import OpenAI
c = OpenAI(base_url="http://127.0.0.1:8850/v1", api_key="x", max_retries=0)
M = "SmolLM2-135M-Instruct"
class Color(str, Enum):
    red = "red"; blue = "blue"
class Addr(BaseModel):
    city: str
    zip: Optional[str]
class Person(BaseModel):
    name: str
    age: int
    color: Color
    addr: Addr
    tags: list[str]
msgs = [{"role": "user", "content": "Describe a person as JSON."}]
try:
    r = c.chat.completions.parse(model=M, messages=msgs, response_format=Person, max_tokens=120, temperature=0)
    print("parse:", r.choices[0].finish_reason, r.choices[0].message.content, "->", r.choices[0].message.parsed)
except Exception as e:
    print("parse ERR", type(e).__name__, str(e)[:300])
class GetWeather(BaseModel):
    city: str
    unit: Optional[Color]
try:
    r = c.chat.completions.parse(model=M, messages=[{"role":"user","content":"Weather in Paris?"}], tools=[openai.pydantic_function_tool(GetWeather)], tool_choice="required", parallel_tool_calls=False, max_tokens=60, temperature=0)
    m = r.choices[0].message
    print("parse tools:", r.choices[0].finish_reason, m.tool_calls[0].function.arguments if m.tool_calls else None, "->", m.tool_calls[0].function.parsed_arguments if m.tool_calls else None)
except Exception as e:
    print("parse tools ERR", type(e).__name__, str(e)[:300])
try:
    with c.chat.completions.stream(model=M, messages=msgs, response_format=Person, max_tokens=120, temperature=0) as s:
        for ev in s: pass
        f = s.get_final_completion()
    print("stream parse:", f.choices[0].message.parsed)
except Exception as e:
    print("stream ERR", type(e).__name__, str(e)[:300])
try:
    with c.chat.completions.stream(model=M, messages=[{"role":"user","content":"Weather in Paris?"}], tools=[openai.pydantic_function_tool(GetWeather)], tool_choice="required", parallel_tool_calls=False, max_tokens=60, temperature=0) as s:
        evs = [ev.type for ev in s]
        f = s.get_final_completion()
    print("stream tools:", sorted(set(evs)), f.choices[0].message.tool_calls[0].function.parsed_arguments)
except Exception as e:
    print("stream tools ERR", type(e).__name__, str(e)[:300])
print(json.dumps(openai.pydantic_function_tool(GetWeather))[:400])
