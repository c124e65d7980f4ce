# OpenAI Agents SDK (openai-agents 0.24.0, installed in /tmp/s58/av) against roseinfer; logs every request body the SDK sends
import asyncio, json, httpx2 as httpx
from openai import AsyncOpenAI
from agents import Agent, Runner, function_tool, set_tracing_disabled, OpenAIResponsesModel, ModelSettings, OpenAIConversationsSession
set_tracing_disabled(True)
sent = []
async def log(req: httpx.Request):
    if req.content: sent.append((req.method, req.url.path, json.loads(req.content)))
    else: sent.append((req.method, str(req.url), None))
client = AsyncOpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x", http_client=httpx.AsyncClient(event_hooks={"request": [log]}))
model = OpenAIResponsesModel(model="SmolLM2-135M-Instruct", openai_client=client)

@function_tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return f"{city}: sunny"

async def main():
    agent = Agent(name="a", instructions="Use tools.", model=model, tools=[get_weather],
                  model_settings=ModelSettings(temperature=0, max_tokens=60, tool_choice="required", parallel_tool_calls=False, top_logprobs=None))
    r = await Runner.run(agent, "Weather in Paris?", max_turns=3)
    print("run1 final:", repr(r.final_output)[:100], "responses:", len(r.raw_responses))
    agent2 = Agent(name="b", instructions="Be brief.", model=model, model_settings=ModelSettings(temperature=0, max_tokens=400))
    r2 = await Runner.run(agent2, "Hi, I am Ada", )
    r3 = await Runner.run(agent2, "Who am I?", previous_response_id=r2.last_response_id)
    print("prev-id run:", repr(r3.final_output)[:80])
    session = OpenAIConversationsSession(openai_client=client)
    await Runner.run(agent2, "My name is Bob", session=session)
    r4 = await Runner.run(agent2, "What is my name?", session=session)
    items = await session.get_items()
    print("session items:", len(items), [i.get("role") or i.get("type") for i in items])
    s = Runner.run_streamed(agent2, "Count to 3")
    async for ev in s.stream_events(): pass
    print("streamed:", repr(s.final_output)[:60])
    r5 = await Runner.run(agent2, "hello", conversation_id=(await client.conversations.create()).id)
    print("conversation_id run:", repr(r5.final_output)[:60])

asyncio.run(main())
print("\nrequest bodies the Agents SDK sent (keys):")
for m, p, b in sent:
    print(m, p, sorted(b) if isinstance(b, dict) else b)
for m, p, b in sent:
    if isinstance(b, dict) and p.endswith("/responses"):
        print(json.dumps({k: v for k, v in b.items() if k not in ("input", "tools")})); break
