import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook
from langchain_core.messages import HumanMessage, ToolMessage, AIMessage, SystemMessage
from t_lc import llm, get_weather, Weather, Q
@__import__("langchain_core.tools", fromlist=["tool"]).tool
def get_time(city: str) -> str:
    """Get the local time in a city."""
    return "12:00"
def rt_stream(l):
    msgs = [HumanMessage(Q)]
    chunks = list(l.bind_tools([get_weather, get_time], tool_choice="any", strict=True, parallel_tool_calls=True).stream(msgs))
    ai = chunks[0]
    for c in chunks[1:]: ai = ai + c
    assert ai.tool_calls, ai
    msgs += [ai] + [ToolMessage([{"type": "text", "text": "Sunny"}], tool_call_id=tc["id"]) for tc in ai.tool_calls]
    return "".join(c.content for c in l.bind_tools([get_weather, get_time]).stream(msgs))
def manual_history(l):
    msgs = [SystemMessage("Use tools."), HumanMessage(Q),
            AIMessage(content="Let me check.", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"},
                                                      {"name": "get_time", "args": {"city": "Paris"}, "id": "c2"}]),
            ToolMessage("Sunny", tool_call_id="c1", name="get_weather"), ToolMessage("12:00", tool_call_id="c2")]
    return l.bind_tools([get_weather, get_time], parallel_tool_calls=False).invoke(msgs).content
cases = {
 "rt_stream_any_strict": lambda: rt_stream(llm(max_tokens=48)),
 "manual_history": lambda: manual_history(llm(max_tokens=32)),
 "tool_choice_named_parallel_false": lambda: llm(max_tokens=48).bind_tools([get_weather, get_time], tool_choice="get_time", parallel_tool_calls=False).invoke(Q).tool_calls,
 "so_json_schema_with_tools": lambda: llm(max_tokens=48).bind_tools([get_weather], response_format=Weather, strict=True).invoke(Q),
}
for name, f in cases.items():
    if sys.argv[1:] and name not in sys.argv[1:]: continue
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:400])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:600])
