from h import *
base = {"messages": MSG, "tools": [W], "tool_choice": "required"}
for label, extra in [("required par=True max_tokens=40", {"max_tokens": 40}),
                     ("required max_tokens=6", {"max_tokens": 6, "parallel_tool_calls": False}),
                     ("required stop=get_weather", {"stop": ["get_weather"], "parallel_tool_calls": False}),
                     ("required stop=tool", {"stop": ["tool"], "parallel_tool_calls": False})]:
    s, j = post({**base, **extra})
    c = j["choices"][0]
    s2, ch = stream({**base, **extra}); a = assemble(ch)
    print(f"{label}: finish={c['finish_reason']} content={c['message']['content']!r} calls={[t['function'] for t in c['message'].get('tool_calls') or []]}  | stream content={a['content']!r}")
