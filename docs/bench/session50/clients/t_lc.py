import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, json, traceback
from pydantic import BaseModel, Field
from langchain_openai import ChatOpenAI
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
M = "SmolLM2-135M-Instruct"
def llm(**k): return ChatOpenAI(base_url="http://127.0.0.1:8880/v1", api_key="x", model=M, max_tokens=k.pop("max_tokens", 32), temperature=k.pop("temperature", 0), **k)
@tool
def get_weather(city: str) -> str:
    """Get the weather in a city."""
    return f"Sunny in {city}"
class Weather(BaseModel):
    """Weather report."""
    city: str = Field(max_length=20)
    summary: str = Field(max_length=30)
Q = "What is the weather in Paris?"
def roundtrip(l):
    msgs = [HumanMessage(Q)]
    ai = l.bind_tools([get_weather], tool_choice="required").invoke(msgs)
    assert ai.tool_calls, ai
    msgs += [ai] + [ToolMessage(get_weather.invoke(tc["args"]), tool_call_id=tc["id"]) for tc in ai.tool_calls]
    return l.bind_tools([get_weather]).invoke(msgs)
def stream_tools(l):
    chunks = list(l.bind_tools([get_weather], tool_choice="get_weather").stream(Q))
    agg = chunks[0]
    for c in chunks[1:]: agg = agg + c
    return agg.tool_calls
cases = {
 "invoke": lambda: llm().invoke("Say hi").content,
 "stream": lambda: "".join(c.content for c in llm().stream("Say hi")),
 "stream_usage": lambda: [c.usage_metadata for c in llm(stream_usage=True).stream("Say hi") if c.usage_metadata],
 "bind_tools_auto": lambda: llm().bind_tools([get_weather]).invoke(Q).tool_calls,
 "tool_roundtrip": lambda: roundtrip(llm(max_tokens=48)),
 "stream_tools": lambda: stream_tools(llm(max_tokens=48)),
 "so_json_schema": lambda: llm(max_tokens=64).with_structured_output(Weather, method="json_schema").invoke(Q),
 "so_json_schema_strict": lambda: llm(max_tokens=64).with_structured_output(Weather, method="json_schema", strict=True).invoke(Q),
 "so_function_calling": lambda: llm(max_tokens=64).with_structured_output(Weather, method="function_calling").invoke(Q),
 "so_function_calling_strict": lambda: llm(max_tokens=64).with_structured_output(Weather, method="function_calling", strict=True).invoke(Q),
 "so_json_mode": lambda: llm(max_tokens=64).with_structured_output(Weather, method="json_mode").invoke(Q + " Answer in JSON with keys city and summary."),
 "so_json_schema_include_raw": lambda: llm(max_tokens=64).with_structured_output(Weather, method="json_schema", include_raw=True).invoke(Q),
 "so_json_schema_stream": lambda: list(llm(max_tokens=64).with_structured_output(Weather, method="json_schema").stream(Q))[-1],
 "logprobs": lambda: llm(logprobs=True).invoke("Say hi").response_metadata["logprobs"]["content"][:2],
 "top_logprobs": lambda: llm(logprobs=True, top_logprobs=2).invoke("Say hi").response_metadata["logprobs"]["content"][:1],
 "logprobs_stream": lambda: [c.response_metadata.get("logprobs") for c in llm(logprobs=True).stream("Say hi")][:2],
 "n2": lambda: [g.text for g in llm(n=2, temperature=0.8).generate([[HumanMessage("Say hi")]]).generations[0]],
 "seed_topp_penalties": lambda: llm(seed=1, top_p=0.9, temperature=0.7, frequency_penalty=0.5, presence_penalty=0.1, stop=["\n"]).invoke("Say hi").content,
 "model_kwargs_user": lambda: llm(model_kwargs={"user": "u1"}).invoke("Say hi").content,
 "extra_body_topk": lambda: llm(extra_body={"top_k": 5}).invoke("Say hi").content,
 "reasoning_effort": lambda: llm(reasoning_effort="low").invoke("Say hi").content,
 "batch": lambda: [m.content for m in llm().batch(["Say hi", "Say bye"])],
 "system_dev_multi": lambda: llm().invoke([("system","Be brief."),("human",[{"type":"text","text":"Say"},{"type":"text","text":"hi"}])]).content,
 "ainvoke": lambda: __import__("asyncio").run(llm().ainvoke("Say hi")).content,
 "astream": lambda: __import__("asyncio").run(_astream()),
}
async def _astream():
    return "".join([c.content async for c in llm().astream("Say hi")])
if __name__ != "__main__": cases = {}
for name, f in cases.items():
    if sys.argv[1:] and name not in sys.argv[1:]: continue
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:400])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:600])
