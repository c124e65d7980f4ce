# tool_choice auto: make the model call by prefilling the assistant turn (continue_final_message)
from common import *
import json
base = [{"role": "user", "content": "What's the weather in Paris and in Rome?"}]
for pre in ["<tool_call>\n", "Sure, let me check. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"]:
    for ptc in [True, False]:
        body = {"model": M, "messages": base + [{"role": "assistant", "content": pre}], "tools": [WEATHER, TIME], "tool_choice": "auto",
                "parallel_tool_calls": ptc, "continue_final_message": True, "add_generation_prompt": False, "max_tokens": 80, "temperature": 0}
        r = post("/v1/chat/completions", body)
        j = r.json()
        show(f"prefill={pre[:20]!r} ptc={ptc}", (r.status_code, j.get("error") or (j["choices"][0]["finish_reason"], j["choices"][0]["message"])))
# system prompt nudging calls under auto, several temperatures/seeds, ptc False: count calls
sysm = {"role": "system", "content": "Always answer by calling the tools. Call get_weather for every city mentioned."}
for seed in range(6):
    body = {"model": M, "messages": [sysm] + base, "tools": [WEATHER, TIME], "tool_choice": "auto", "parallel_tool_calls": False,
            "max_tokens": 100, "temperature": 0.9, "seed": seed}
    j = post("/v1/chat/completions", body).json()
    c = j["choices"][0]
    show(f"auto ptc=False seed={seed}", (c["finish_reason"], (c["message"]["content"] or "")[:120], [(t["function"]["name"], t["function"]["arguments"]) for t in c["message"].get("tool_calls") or []]))
