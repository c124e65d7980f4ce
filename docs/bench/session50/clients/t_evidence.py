import sys; sys.path.insert(0, "/tmp/s50/clients")
import os; os.environ["HOOKLOG"] = "/tmp/s50/clients/logs/evidence.jsonl"
import hook, asyncio
from langchain_core.messages import HumanMessage, AIMessage
from t_lc import llm, get_weather, Weather, Q
import t_agents
async def ag():
    await t_agents.main(["output_type_tools_required"], False)
asyncio.run(ag())
def lc(name, f):
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:300])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:400])
lc("lc_human_name", lambda: llm().invoke([HumanMessage("Hi", name="alice")]).content)
lc("lc_ai_name", lambda: llm().invoke([HumanMessage("Hi"), AIMessage("Hello!", name="agent"), HumanMessage("Bye")]).content)
lc("lc_tools_any_plus_rf", lambda: llm(max_tokens=48).bind_tools([get_weather], tool_choice="any", response_format=Weather, strict=True).invoke(Q).tool_calls)
