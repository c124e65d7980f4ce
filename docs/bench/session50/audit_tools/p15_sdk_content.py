from openai import OpenAI
import openai
from pydantic import BaseModel
c = OpenAI(base_url="http://127.0.0.1:8850/v1", api_key="x", max_retries=0)
W = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
kw = dict(model="SmolLM2-135M-Instruct", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=[W], tool_choice="required", parallel_tool_calls=False, max_tokens=40, temperature=0)
r = c.chat.completions.create(**kw)
print("non-stream content:", repr(r.choices[0].message.content))
with c.chat.completions.stream(**kw) as s:
    for _ in s: pass
    f = s.get_final_completion()
print("stream (SDK accumulated) content:", repr(f.choices[0].message.content))
# raw first chunk
st = c.chat.completions.create(**kw, stream=True)
first = next(iter(st)); print("first chunk delta:", first.choices[0].delta)
