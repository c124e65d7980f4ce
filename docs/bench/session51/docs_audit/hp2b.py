import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=120)
def post(path, body, **kw):
    r = c.post(B+path, json=body, **kw)
    try: j = r.json()
    except Exception: j = r.text
    return r, j
def show(label, r, j, keys=None):
    if isinstance(j, dict) and "error" in j:
        print(f"[{label}] {r.status_code} ERR param={j['error'].get('param')} code={j['error'].get('code')} msg={j['error']['message'][:220]}")
    else:
        s = json.dumps(j)
        print(f"[{label}] {r.status_code} {s[:400]}")
CH = "/v1/chat/completions"; CO = "/v1/completions"
M = [{"role": "user", "content": "hi"}]
r = c.post(B+CO, content=b'{"prompt":"a","max_tokens":1,"json_schema":{"type":"number","maximum":1e999}}', headers={"content-type": "application/json"}); print("raw 1e999 in schema", r.status_code, r.text[:200])
# tools on completions
show("tools on completions", *post(CO, {"prompt": "a", "max_tokens": 1, "tools": [{"type": "function", "function": {"name": "f"}}]}))
show("named tool_choice w/o tools", *post(CH, {"messages": M, "max_tokens": 1, "tool_choice": {"type": "function", "function": {"name": "f"}}}))
r, j = post(CH, {"messages": M, "max_tokens": 1, "tool_choice": "none"}); print("tool_choice none w/o tools", r.status_code)
r, j = post(CH, {"messages": M, "max_tokens": 1, "parallel_tool_calls": False}); print("parallel false w/o tools", r.status_code)
# content parts
r, j = post(CH, {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}], "max_tokens": 1}); print("parts", r.status_code)
show("image part", *post(CH, {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x"}}]}], "max_tokens": 1}))
show("name on user", *post(CH, {"messages": [{"role": "user", "content": "a", "name": "bob"}], "max_tokens": 1}))
r, j = post(CH, {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "name": "bot"}, {"role": "user", "content": "c"}], "max_tokens": 1}); print("name on assistant", r.status_code)
r, j = post(CH, {"messages": [{"role": "developer", "content": "a"}, {"role": "user", "content": "c"}], "max_tokens": 1}); print("developer", r.status_code)
show("continue_final w/ agp", *post(CH, {"messages": M, "max_tokens": 1, "continue_final_message": True}))
r, j = post(CH, {"messages": M + [{"role": "assistant", "content": "The"}], "max_tokens": 1, "continue_final_message": True, "add_generation_prompt": False}); print("continue_final ok", r.status_code)
show("ctk unknown", *post(CH, {"messages": M, "max_tokens": 1, "chat_template_kwargs": {"foo": 1}}))
show("context exceeded", *post(CO, {"prompt": "a " * 2100, "max_tokens": 1}))
show("bad_words 1025", *post(CO, {"prompt": "a", "max_tokens": 1, "bad_words": ["x"] * 1025}))
show("bad_words 101 chars", *post(CO, {"prompt": "a", "max_tokens": 1, "bad_words": ["x" * 101]}))
show("min_p 2", *post(CO, {"prompt": "a", "max_tokens": 1, "min_p": 2}))
show("seed -1", *post(CO, {"prompt": "a", "max_tokens": 1, "seed": -1}))
show("seed -2", *post(CO, {"prompt": "a", "max_tokens": 1, "seed": -2}))
show("echo chat", *post(CH, {"messages": M, "max_tokens": 1, "echo": True}))
show("function_call auto", *post(CH, {"messages": M, "max_tokens": 1, "function_call": "auto"}))
show("suffix", *post(CO, {"prompt": "a", "max_tokens": 1, "suffix": "x"}))
show("top_k -1", *post(CO, {"prompt": "a", "max_tokens": 1, "top_k": -1}))
