import sys, json
from enum import Enum
import openai
from openai import OpenAI
from pydantic import BaseModel
port = sys.argv[1]
client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused")
M = "SmolLM2-135M-Instruct"
print("models", [m.id for m in client.models.list()])
print("retrieve", client.models.retrieve(M).id)
class Unit(str, Enum):
    c = "c"; f = "f"
class Weather(BaseModel):

    unit: Unit
t = openai.pydantic_function_tool(Weather, name="get_weather")
print("tool strict:", t["function"].get("strict"))
r = client.chat.completions.parse(model=M, messages=[{"role": "user", "content": "weather?"}], tools=[t], tool_choice="required", parallel_tool_calls=False, max_tokens=60)
msg = r.choices[0].message
print("parse finish", r.choices[0].finish_reason, msg.tool_calls and [ (tc.function.name, tc.function.arguments[:80], tc.function.parsed_arguments) for tc in msg.tool_calls])
class Answer(BaseModel):
    answer: int
r = client.chat.completions.parse(model=M, messages=[{"role": "user", "content": "2+2?"}], response_format=Answer, max_tokens=40)
print("parse response_format", r.choices[0].finish_reason, r.choices[0].message.content, r.choices[0].message.parsed)
with client.chat.completions.stream(model=M, messages=[{"role": "user", "content": "2+2?"}], response_format=Answer, max_tokens=40) as s:
    for ev in s: pass
    fc = s.get_final_completion()
print("stream helper", fc.choices[0].message.parsed)
# send the parsed message back (as agents do)
msgs = [{"role": "user", "content": "2+2?"}, fc.choices[0].message.model_dump(exclude_none=False), {"role": "user", "content": "again"}]
try:
    r = client.chat.completions.create(model=M, messages=msgs, max_tokens=2); print("roundtrip ok")
except openai.BadRequestError as e: print("roundtrip 400", e)
# completions
r = client.completions.create(model=M, prompt="a b", max_tokens=2, echo=True, logprobs=1)
print("compl echo", repr(r.choices[0].text), r.choices[0].logprobs.tokens)
try:
    client.completions.create(model=M, prompt="a", max_tokens=2, extra_body={"mirostat": 2})
except openai.BadRequestError as e: print("400 ok:", e.body.get("param") if isinstance(e.body, dict) else e.body)
# vLLM-style extra_body
r = client.chat.completions.create(model=M, messages=[{"role": "user", "content": "x"}], max_tokens=5, extra_body={"guided_choice": ["yes", "no"]})
print("guided_choice", r.choices[0].message.content)
r = client.chat.completions.create(model=M, messages=[{"role": "user", "content": "x"}], max_tokens=5, extra_body={"structured_outputs": {"choice": ["yes", "no"]}})
print("so choice", r.choices[0].message.content)
# max_completion_tokens / reasoning_effort / n
r = client.chat.completions.create(model=M, messages=[{"role": "user", "content": "x"}], max_completion_tokens=3, n=2, seed=1)
print("n=2", [c.message.content for c in r.choices], r.usage)
try:
    client.chat.completions.create(model=M, messages=[{"role": "user", "content": "x"}], max_tokens=3, reasoning_effort="low")
except openai.BadRequestError as e: print("reasoning_effort low -> 400")
# streaming tool calls via SDK accumulate
weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
with client.chat.completions.stream(model=M, messages=[{"role": "user", "content": "weather"}], tools=[weather], tool_choice={"type": "function", "function": {"name": "get_weather"}}, max_tokens=8) as s:
    for ev in s: pass
    fc = s.get_final_completion()
print("stream tool", fc.choices[0].finish_reason, fc.choices[0].message.tool_calls[0].function.arguments[:60] if fc.choices[0].message.tool_calls else None)
