import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, asyncio, json, datetime, uuid, enum
from typing import Literal, Optional
from pydantic import BaseModel, Field
from openai import AsyncOpenAI
from agents import (Agent, Runner, function_tool, OpenAIChatCompletionsModel, ModelSettings, set_tracing_disabled, handoff)
from openai.types.shared import Reasoning
from langchain_core.messages import HumanMessage, AIMessage, ToolMessage, SystemMessage
from t_lc import llm, get_weather
set_tracing_disabled(True)
client = AsyncOpenAI(base_url="http://127.0.0.1:8880/v1", api_key="x")
model = OpenAIChatCompletionsModel(model="SmolLM2-135M-Instruct", openai_client=client)
class Color(str, enum.Enum):
    red = "red"; blue = "blue"
class Item(BaseModel):
    name: str = Field(max_length=10)
    qty: int = Field(ge=1, le=9)
class Order(BaseModel):
    id: uuid.UUID
    when: datetime.date
    color: Color
    kind: Literal["a", "b"]
    note: Optional[str] = Field(max_length=10)
    items: list[Item] = Field(min_length=1, max_length=2)
    code: str = Field(pattern=r"^[A-Z]{3}$")
@function_tool
def now() -> str:
    """Current time."""
    return "12:00"
@function_tool
def place(order: Order) -> str:
    """Place an order."""
    return "ok"
S = lambda **k: ModelSettings(max_tokens=64, temperature=0, **k)
async def agent(name, ag, inp="What time is it? Then order."):
    hook.tag(name)
    try:
        r = await Runner.run(ag, inp, max_turns=3)
        print(f"OK   {name}: {r.final_output!r}"[:300]); return r
    except Exception as e:
        print(f"FAIL {name}: {type(e).__name__}: {e}"[:600])
async def main():
    await agent("ag_noarg_tool", Agent(name="a", model=model, tools=[now], model_settings=S(tool_choice="now"), tool_use_behavior="stop_on_first_tool"))
    await agent("ag_complex_tool", Agent(name="a", model=model, tools=[place], model_settings=S(tool_choice="place"), tool_use_behavior="stop_on_first_tool"))
    await agent("ag_complex_output", Agent(name="a", model=model, output_type=Order, model_settings=S()), "Make an order.")
    await agent("ag_top_logprobs", Agent(name="a", model=model, model_settings=S(top_logprobs=2)), "Hi")
    await agent("ag_include_usage_meta", Agent(name="a", model=model, model_settings=S(include_usage=True, metadata={"k": "v"}, store=False, extra_args={"top_k": 3})), "Hi")
    await agent("ag_reasoning", Agent(name="a", model=model, model_settings=S(reasoning=Reasoning(effort="low"))), "Hi")
    await agent("ag_verbosity", Agent(name="a", model=model, model_settings=S(verbosity="low")), "Hi")
    await agent("ag_extra_headers_query", Agent(name="a", model=model, model_settings=S(extra_headers={"X-Request-Id": "abc"}, extra_query={"foo": "bar"})), "Hi")
    sp = Agent(name="spanish", instructions="Reply in Spanish.", model=model, model_settings=S())
    await agent("ag_handoff", Agent(name="triage", instructions="Hand off to spanish.", model=model, handoffs=[sp], model_settings=S(tool_choice="required")), "Hola")
    # multi-turn with history from a tool run
    r = await agent("ag_hist1", Agent(name="a", model=model, tools=[now], model_settings=S(tool_choice="now"), reset_tool_choice=True), "What time is it?")
    if r:
        await agent("ag_hist2", Agent(name="a", model=model, tools=[now], model_settings=S()), r.to_input_list() + [{"role": "user", "content": "Thanks. And now?"}])
    # stream with usage
    hook.tag("ag_stream_usage")
    try:
        rs = Runner.run_streamed(Agent(name="a", model=model, model_settings=S(include_usage=True)), "Hi")
        async for _ in rs.stream_events(): pass
        print("OK   ag_stream_usage:", rs.context_wrapper.usage)
    except Exception as e: print(f"FAIL ag_stream_usage: {type(e).__name__}: {e}"[:600])
asyncio.run(main())
def lc(name, f):
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:400])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:600])
lc("lc_human_name", lambda: llm().invoke([HumanMessage("Hi", name="alice")]).content)
lc("lc_ai_name", lambda: llm().invoke([HumanMessage("Hi"), AIMessage("Hello!", name="agent"), HumanMessage("Bye")]).content)
lc("lc_complex_json_schema", lambda: llm(max_tokens=64).with_structured_output(Order, method="json_schema").invoke("Make an order."))
lc("lc_complex_fc", lambda: llm(max_tokens=64).with_structured_output(Order, method="function_calling").invoke("Make an order."))
lc("lc_service_tier", lambda: llm(service_tier="flex").invoke("Hi").content)
