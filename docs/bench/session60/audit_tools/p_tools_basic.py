from common import *
msgs = [{"role": "user", "content": "What's the weather in Paris?"}]
for tc in ["auto", "none", "required", {"type": "function", "function": {"name": "get_time"}}]:
    for ptc in [True, False]:
        r = client.chat.completions.create(model=M, messages=msgs, tools=[WEATHER, TIME], tool_choice=tc,
                                           parallel_tool_calls=ptc, max_tokens=80, temperature=0)
        c = r.choices[0]
        show(f"tool_choice={tc} ptc={ptc}", {"finish": c.finish_reason, "content": c.message.content,
             "tool_calls": [(t.id, t.type, t.function.name, t.function.arguments) for t in (c.message.tool_calls or [])]})
# n>1 with tools
r = client.chat.completions.create(model=M, messages=msgs, tools=[WEATHER], tool_choice="required", parallel_tool_calls=False,
                                   n=3, max_tokens=60, temperature=1.0, seed=1)
for c in r.choices:
    show(f"n=3 choice {c.index}", {"finish": c.finish_reason, "tc": [(t.id, t.function.name, t.function.arguments) for t in c.message.tool_calls or []]})
ids = [t.id for c in r.choices for t in c.message.tool_calls or []]
show("unique ids across choices", len(ids) == len(set(ids)))
show("usage", r.usage.model_dump())
