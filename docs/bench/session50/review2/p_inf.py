import httpx, sys
bodies = {
 "temperature": '{"prompt":"x","max_tokens":2,"temperature":1e400}',
 "top_p": '{"prompt":"x","max_tokens":2,"top_p":1e400}',
 "max_tokens": '{"prompt":"x","max_tokens":1e400}',
 "seed": '{"prompt":"x","max_tokens":2,"seed":1e400}',
 "logit_bias": '{"prompt":"x","max_tokens":2,"logit_bias":{"5":1e400}}',
 "length_penalty(noop)": '{"prompt":"x","max_tokens":2,"length_penalty":1e400}',
 "mirostat_tau(noop)": '{"prompt":"x","max_tokens":2,"mirostat_tau":1e400}',
 "guided_json": '{"prompt":"x","max_tokens":2,"guided_json":{"const":1e400}}',
 "so.json": '{"prompt":"x","max_tokens":2,"structured_outputs":{"json":{"const":1e400}}}',
 "so.json-text": '{"prompt":"x","max_tokens":4,"structured_outputs":{"json":"{\\"const\\":1e400}"}}',
 "chat_template_kwargs": '{"messages":[{"role":"user","content":"a"}],"max_tokens":2,"chat_template_kwargs":{"x":1e400}}',
 "tools": '{"messages":[{"role":"user","content":"a"}],"max_tokens":2,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"const":1e400}}}}}]}',
 "tool_args_msg": '{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}],"max_tokens":2}',
 "stream_options": '{"prompt":"x","max_tokens":2,"stream":true,"stream_options":{"include_usage":true, "x":1e400}}',
 "user(noop str)": '{"prompt":"x","max_tokens":2,"user":1e400}',
 "metadata": '{"messages":[{"role":"user","content":"a"}],"max_tokens":2,"metadata":{"a":1e400}}',
 "priority": '{"prompt":"x","max_tokens":2,"priority":1e400}',
 "n": '{"prompt":"x","max_tokens":2,"n":1e400}',
 "so.disable_fallback": '{"prompt":"x","max_tokens":2,"structured_outputs":{"choice":["a","b"],"disable_fallback":1e400}}',
 "prompt list": '{"prompt":[1e400],"max_tokens":2}',
 "nan": '{"prompt":"x","max_tokens":2,"top_k":NaN}',
}
for port in sys.argv[1:]:
    print("== port", port)
    for k, b in bodies.items():
        path = "/v1/chat/completions" if "messages" in b else "/v1/completions"
        r = httpx.post(f"http://127.0.0.1:{port}{path}", content=b, headers={"content-type":"application/json"}, timeout=60)
        try: e = r.json().get("error") or {}
        except Exception: e = {"message": r.text[:100]}
        print(f"{k:22} {r.status_code} param={e.get('param')!r} {str(e.get('message'))[:110]!r}")
