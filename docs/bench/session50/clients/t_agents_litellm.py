import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, asyncio
from pydantic import BaseModel
from agents import Agent, Runner, function_tool, ModelSettings, set_tracing_disabled
from agents.extensions.models.litellm_model import LitellmModel
set_tracing_disabled(True)
@function_tool
def get_weather(city: str) -> str:
    """Get the weather in a city."""
    return f"Sunny in {city}"
class W(BaseModel):
    city: str
async def main():
    for prefix in ("hosted_vllm/", "openai/"):
        model = LitellmModel(model=prefix + "SmolLM2-135M-Instruct", base_url="http://127.0.0.1:8880/v1", api_key="x")
        S = lambda **k: ModelSettings(max_tokens=48, temperature=0, **k)
        cases = {
          "tool": Agent(name="a", model=model, tools=[get_weather], model_settings=S(tool_choice="required"), tool_use_behavior="stop_on_first_tool"),
          "tool_none": Agent(name="a", model=model, tools=[get_weather], model_settings=S(tool_choice="none")),
          "output": Agent(name="a", model=model, output_type=W, model_settings=S()),
          "usage": Agent(name="a", model=model, model_settings=S(include_usage=True)),
        }
        for name, ag in cases.items():
            for stream in (False, True):
                tag = f"lm_{prefix}{name}{'/stream' if stream else ''}"; hook.tag(tag)
                try:
                    if stream:
                        r = Runner.run_streamed(ag, "Weather in Paris?", max_turns=2)
                        async for _ in r.stream_events(): pass
                    else:
                        r = await Runner.run(ag, "Weather in Paris?", max_turns=2)
                    print(f"OK   {tag}: {r.final_output!r}"[:200])
                except Exception as e: print(f"FAIL {tag}: {type(e).__name__}: {e}"[:500])
asyncio.run(main())
