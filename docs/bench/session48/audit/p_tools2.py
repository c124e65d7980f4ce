from h import *
def t(label, r, n=300):
    s, j, dt = r
    if s == 200:
        for c in j["choices"]:
            m = c.get("message", {})
            print(f"[200] {label}: content={short(m.get('content'), 120)!s} tool_calls={short(m.get('tool_calls'), 250)} fr={c['finish_reason']} usage={j['usage']['completion_tokens']}")
    else:
        show(label, r, n)
np = {"type": "function", "function": {"name": "noparams"}}
t("required stop '}'", chat(tools=[np], tool_choice="required", stop=["}"], max_tokens=40))
t("required stop 'noparams'", chat(tools=[np], tool_choice="required", stop=["noparams"], max_tokens=40))
t("required stop '</tool_call>'", chat(tools=[np], tool_choice="required", stop=["</tool_call>"], max_tokens=40))
t("required max_tokens 5", chat(tools=[np], tool_choice="required", max_tokens=5))
t("required max_tokens 30", chat(tools=[np], tool_choice="required", max_tokens=30))
t("required max_tokens 60", chat(tools=[np], tool_choice="required", max_tokens=60))
t("required parallel false max 60", chat(tools=[np], tool_choice="required", parallel_tool_calls=False, max_tokens=60))
t("required n=2 seed", chat(tools=[np], tool_choice="required", n=2, temperature=1, seed=3, max_tokens=40))
t("required logprobs", chat(tools=[np], tool_choice="required", logprobs=True, max_tokens=30))
t("named + min_tokens 50", chat({"min_tokens": 50}, tools=[np], tool_choice={"type": "function", "function": {"name": "noparams"}}, max_tokens=60))
t("required + ignore_eos", chat(tools=[np], tool_choice="required", ignore_eos=True, max_tokens=60))
