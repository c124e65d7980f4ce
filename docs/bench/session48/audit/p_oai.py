import openai, json
c = openai.OpenAI(base_url="http://127.0.0.1:18401/v1", api_key="x")
print(openai.__version__)
r = c.chat.completions.create(model="tinysmol", messages=[{"role": "user", "content": "hi"}], max_tokens=3, temperature=0, logprobs=True, top_logprobs=2, n=2, seed=1)
print(type(r).__name__, r.choices[1].message.content, r.choices[0].logprobs.content[0].top_logprobs[0], r.usage)
r = c.chat.completions.create(model="tinysmol", messages=[{"role": "user", "content": "hi"}], max_completion_tokens=3, temperature=0, stream=True, stream_options={"include_usage": True})
chunks = list(r); print(len(chunks), chunks[-1].usage, [ch.choices[0].delta.content if ch.choices else None for ch in chunks])
r = c.completions.create(model="tinysmol", prompt=["a", "b"], max_tokens=3, temperature=0, logprobs=2, echo=True)
print(r.choices[1].text, r.choices[1].logprobs.tokens, r.usage)
r = c.completions.create(model="tinysmol", prompt=[[1, 2], [3]], max_tokens=2, temperature=0)
print([ch.text for ch in r.choices], r.usage)
f = {"type": "function", "function": {"name": "noparams"}}
r = c.chat.completions.create(model="tinysmol", messages=[{"role": "user", "content": "hi"}], tools=[f], tool_choice="required", max_tokens=20)
print(r.choices[0].message.tool_calls, r.choices[0].finish_reason)
# beta parse with pydantic model
from pydantic import BaseModel
class A(BaseModel):
    a: int
try:
    r = c.beta.chat.completions.parse(model="tinysmol", messages=[{"role": "user", "content": "hi"}], response_format=A, max_tokens=20, temperature=0)
    print("parse", r.choices[0].message.parsed, r.choices[0].finish_reason)
except Exception as e:
    print("parse exc", type(e).__name__, str(e)[:300])
try:
    r = c.chat.completions.parse(model="tinysmol", messages=[{"role": "user", "content": "hi"}], response_format=A, max_tokens=20, temperature=0)
    print("parse2", r.choices[0].message.parsed, r.choices[0].finish_reason)
except Exception as e:
    print("parse2 exc", type(e).__name__, str(e)[:300])
# pydantic_function_tool
try:
    r = c.chat.completions.parse(model="tinysmol", messages=[{"role": "user", "content": "hi"}], tools=[openai.pydantic_function_tool(A)], tool_choice="required", max_tokens=20, temperature=0)
    print("parse tools", r.choices[0].message.tool_calls, r.choices[0].finish_reason)
except Exception as e:
    print("parse tools exc", type(e).__name__, str(e)[:300])
# models
print([m.id for m in c.models.list()], c.models.retrieve("tinysmol").id)
try: c.models.retrieve("nope")
except Exception as e: print("retrieve nope", type(e).__name__)
try: c.embeddings.create(model="tinysmol", input="x")
except Exception as e: print("embeddings", type(e).__name__, str(e)[:200])
# errors shape
try: c.chat.completions.create(model="tinysmol", messages=[{"role": "user", "content": "hi"}], max_tokens=3, extra_body={"mirostat": 2})
except openai.BadRequestError as e: print("badreq", e.status_code, e.param, e.code, e.message[:100])
