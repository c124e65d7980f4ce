import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, asyncio, traceback
from pydantic import BaseModel
from openai import AsyncOpenAI
from agents import (Agent, Runner, function_tool, OpenAIChatCompletionsModel, ModelSettings,
                    set_tracing_disabled)
set_tracing_disabled(True)
client = AsyncOpenAI(base_url="http://127.0.0.1:8880/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
model = OpenAIChatCompletionsModel(model=M, openai_client=client)

@function_tool
def get_weather(city: str) -> str:
    """Get the weather in a city."""
    return f"The weather in {city} is sunny, 20C."

class Weather(BaseModel):
    city: str
    summary: str

S = lambda **k: ModelSettings(max_tokens=48, temperature=0, **k)
cases = {
 "plain": lambda: Agent(name="a", instructions="Be brief.", model=model, model_settings=S()),
 "tool": lambda: Agent(name="a", instructions="Use tools.", model=model, tools=[get_weather], model_settings=S()),
 "tool_required": lambda: Agent(name="a", instructions="Use tools.", model=model, tools=[get_weather],
        model_settings=S(tool_choice="required"), tool_use_behavior="stop_on_first_tool"),
 "tool_parallel_false_top_p": lambda: Agent(name="a", model=model, tools=[get_weather],
        model_settings=ModelSettings(max_tokens=48, temperature=0.7, top_p=0.9, parallel_tool_calls=False, tool_choice="get_weather"),
        tool_use_behavior="stop_on_first_tool"),
 "output_type": lambda: Agent(name="a", instructions="Answer in JSON.", model=model, output_type=Weather, model_settings=S()),
 "output_type_tools": lambda: Agent(name="a", instructions="Use tools then answer.", model=model, tools=[get_weather], output_type=Weather, model_settings=S()),
 "output_type_tools_required": lambda: Agent(name="a", model=model, tools=[get_weather], output_type=Weather,
        model_settings=S(tool_choice="required"), reset_tool_choice=True),
}
async def main(which, stream):
    for name, mk in cases.items():
        if which and name not in which: continue
        tagname = name + ("/stream" if stream else "")
        hook.tag(tagname)
        try:
            ag = mk()
            if stream:
                r = Runner.run_streamed(ag, "What is the weather in Paris?", max_turns=3)
                n = 0
                async for ev in r.stream_events(): n += 1
                out = r.final_output
            else:
                r = await Runner.run(ag, "What is the weather in Paris?", max_turns=3)
                out = r.final_output
            print(f"OK   {tagname}: {out!r}"[:300])
        except Exception as e:
            print(f"FAIL {tagname}: {type(e).__name__}: {e}"[:600])
if __name__ == "__main__": asyncio.run(main(sys.argv[2:], sys.argv[1] == "stream"))
