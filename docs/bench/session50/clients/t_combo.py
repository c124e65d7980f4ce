import sys; sys.path.insert(0, "/tmp/s50/clients")
import hook, litellm
from t_lc import llm, get_weather, Weather, Q
from t_litellm import TOOLS, RF, MSG, M, B
def lc(name, f):
    hook.tag(name)
    try: print(f"OK   {name}: {f()!r}"[:300])
    except Exception as e: print(f"FAIL {name}: {type(e).__name__}: {e}"[:500])
lc("lc_tools_any_plus_rf", lambda: llm(max_tokens=48).bind_tools([get_weather], tool_choice="any", response_format=Weather, strict=True).invoke(Q).tool_calls)
lc("lc_tools_named_plus_json_object", lambda: llm(max_tokens=48).bind_tools([get_weather], tool_choice="get_weather", response_format={"type": "json_object"}).invoke(Q).tool_calls)
lc("litellm_tools_required_plus_rf", lambda: litellm.completion(model="hosted_vllm/"+M, messages=MSG, tools=TOOLS, tool_choice="required", response_format=RF, **B).choices[0].message.tool_calls)
lc("litellm_functions_legacy", lambda: litellm.completion(model="openai/"+M, messages=MSG, functions=[TOOLS[0]["function"]], **B).choices[0].message)
lc("lc_stream_default", lambda: "".join(c.content for c in llm(streaming=True).stream("Hi")))
