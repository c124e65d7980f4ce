import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, json, litellm
from pydantic import BaseModel
litellm.drop_params = False
M = "SmolLM2-135M-Instruct"
B = dict(api_base="http://127.0.0.1:8880/v1", api_key="x", max_tokens=32, temperature=0)
MSG = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather in a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
class Weather(BaseModel):
    city: str
    summary: str
RF = {"type": "json_schema", "json_schema": {"name": "weather", "strict": True, "schema": {"type": "object",
      "properties": {"city": {"type": "string", "maxLength": 20}, "summary": {"type": "string", "maxLength": 30}},
      "required": ["city", "summary"], "additionalProperties": False}}}
def st(**k):
    chunks = list(litellm.completion(stream=True, **k))
    return litellm.stream_chunk_builder(chunks, messages=k["messages"]).model_dump(exclude_none=True)["choices"][0], getattr(chunks[-1], "usage", None)
def rt(prefix):
    r = litellm.completion(model=prefix+M, messages=MSG, tools=TOOLS, tool_choice="required", **{**B, "max_tokens": 48})
    m = r.choices[0].message
    msgs = MSG + [m.model_dump()] + [{"role": "tool", "tool_call_id": tc.id, "content": "Sunny"} for tc in m.tool_calls]
    return litellm.completion(model=prefix+M, messages=msgs, tools=TOOLS, **B).choices[0].message.content
def cases(p):
    return {
     "plain": lambda: litellm.completion(model=p+M, messages=MSG, **B).choices[0].message.content,
     "stream": lambda: st(model=p+M, messages=MSG, **B),
     "stream_usage": lambda: st(model=p+M, messages=MSG, stream_options={"include_usage": True}, **B),
     "tools_required": lambda: litellm.completion(model=p+M, messages=MSG, tools=TOOLS, tool_choice="required", **{**B, "max_tokens": 48}).choices[0].message.tool_calls,
     "tools_stream": lambda: st(model=p+M, messages=MSG, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_weather"}}, **{**B, "max_tokens": 48}),
     "tool_roundtrip": lambda: rt(p),
     "rf_json_schema": lambda: litellm.completion(model=p+M, messages=MSG, response_format=RF, **{**B, "max_tokens": 48}).choices[0].message.content,
     "rf_pydantic": lambda: litellm.completion(model=p+M, messages=MSG, response_format=Weather, **{**B, "max_tokens": 64}).choices[0].message.content,
     "rf_json_object": lambda: litellm.completion(model=p+M, messages=MSG, response_format={"type": "json_object"}, **B).choices[0].message.content,
     "params": lambda: litellm.completion(model=p+M, messages=MSG, top_p=0.9, seed=3, n=2, stop=["\n"], presence_penalty=0.1, frequency_penalty=0.1, user="u", logprobs=True, top_logprobs=1, **B).choices[1].message.content,
     "top_k_extra": lambda: litellm.completion(model=p+M, messages=MSG, top_k=5, **B).choices[0].message.content,
     "parallel_false": lambda: litellm.completion(model=p+M, messages=MSG, tools=TOOLS, parallel_tool_calls=False, **B).choices[0].message,
     "atext_completion": lambda: litellm.text_completion(model=p+M, prompt="Once upon a time", **B).choices[0].text,
     "stream_async": lambda: __import__("asyncio").run(_ast(p)),
    }
async def _ast(p):
    out = ""
    async for c in await litellm.acompletion(model=p+M, messages=MSG, stream=True, stream_options={"include_usage": True}, **B):
        if c.choices and c.choices[0].delta.content: out += c.choices[0].delta.content
    return out
for p in (sys.argv[1].split(",") if __name__ == "__main__" else []):
    for name, f in cases(p).items():
        if sys.argv[2:] and name not in sys.argv[2:]: continue
        tag = p + name; hook.tag(tag)
        try: print(f"OK   {tag}: {f()!r}"[:400])
        except Exception as e: print(f"FAIL {tag}: {type(e).__name__}: {e}"[:700])
