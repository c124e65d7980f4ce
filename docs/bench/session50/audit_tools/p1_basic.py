from h import *
for tc in ["auto", "none", "required", {"type": "function", "function": {"name": "get_time"}}]:
    for par in [True, False]:
        s, j = post({"messages": MSG, "tools": [W, T], "tool_choice": tc, "parallel_tool_calls": par})
        if s != 200: show(f"{tc} par={par} status {s}", j); continue
        ch = j["choices"][0]
        show(f"{tc} par={par}", {"msg": ch["message"], "fr": ch["finish_reason"]})
        s2, chunks = stream({"messages": MSG, "tools": [W, T], "tool_choice": tc, "parallel_tool_calls": par})
        a = assemble(chunks)
        ns = {"content": ch["message"]["content"] or "", "calls": [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in ch["message"].get("tool_calls") or []], "fr": ch["finish_reason"]}
        st = {"content": a["content"], "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in a["calls"]], "fr": a["finish"].get(0)}
        print("   stream==nonstream:", ns == st)
        if ns != st: show("   stream", st)
