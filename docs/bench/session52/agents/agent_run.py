"""The OpenAI Agents SDK (openai-agents, its default OpenAIResponsesModel) against a roseinfer
server on 127.0.0.1:8000: a function tool the agent must call, then its answer, run and
streamed. Prints the items each run produced and the requests' outcome. `--answer`: the
model answers after the tool's result (a second request, with the call and its output in
`input`). `--two-turns`: a conversation chained with `previous_response_id` instead."""

import asyncio
import sys

from agents import (
    Agent,
    ModelSettings,
    OpenAIResponsesModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.exceptions import MaxTurnsExceeded, ModelBehaviorError
from openai import AsyncOpenAI

URL = "http://127.0.0.1:8000/v1"
CALLS: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return f"Sunny and 21 C in {city}"


async def main() -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=URL, api_key="unused")
    model = OpenAIResponsesModel(model="SmolLM2-135M-Instruct", openai_client=client)
    agent = Agent(
        name="weather",
        instructions="Answer with the weather tool's result.",
        tools=[get_weather],
        model=model,
        # the tool's result is the answer: SmolLM2-135M's own second turn rambles past any
        # output limit, and the SDK takes `response.incomplete` as a failure (as with OpenAI)
        tool_use_behavior="stop_on_first_tool" if "--answer" not in sys.argv else "run_llm_again",
        model_settings=ModelSettings(tool_choice="required", parallel_tool_calls=False,
                                     max_tokens=200, temperature=0,
                                     # SmolLM2-135M at temperature 0 repeats itself without it
                                     extra_body={"repetition_penalty": 1.3}),
    )
    for streamed in (False, True):
        CALLS.clear()
        try:
            if streamed:
                run = Runner.run_streamed(agent, "What's the weather in Paris?", max_turns=3)
                kinds = [event.type async for event in run.stream_events()]
                result = run
                print("stream events:", {k: kinds.count(k) for k in set(kinds)})
            else:
                result = await Runner.run(agent, "What's the weather in Paris?", max_turns=3)
            print("streamed" if streamed else "run", [type(i).__name__ for i in result.new_items])
            print("  final output:", repr(result.final_output)[:200])
        except (MaxTurnsExceeded, ModelBehaviorError) as e:
            print("streamed" if streamed else "run", "ended:", type(e).__name__, e)
        print("  tool called with:", CALLS)


async def two_turns() -> None:
    """A conversation the server keeps: the second run sends only its new message, with the
    first run's `previous_response_id` (the SDK's way to chain on OpenAI's stored responses)."""
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=URL, api_key="unused")
    model = OpenAIResponsesModel(model="SmolLM2-135M-Instruct", openai_client=client)
    agent = Agent(name="geo", instructions="Answer in one short sentence.", model=model,
                  model_settings=ModelSettings(max_tokens=64, temperature=0))
    first = await Runner.run(agent, "What is the capital of France?")
    print("turn 1:", repr(first.final_output), first.last_response_id)
    second = await Runner.run(agent, "And of Italy?", previous_response_id=first.last_response_id)
    print("turn 2:", repr(second.final_output), second.last_response_id)
    stored = await client.responses.retrieve(second.last_response_id)
    print("stored turn 2:", stored.previous_response_id == first.last_response_id,
          stored.usage.input_tokens if stored.usage else None)


if "--two-turns" in sys.argv:
    asyncio.run(two_turns())
else:
    asyncio.run(main())
