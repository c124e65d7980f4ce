from common import *
import json
msgs = [{"role": "user", "content": "What's the weather in Paris and in Rome?"}]
for tc, ptc, n in [("required", True, 1), ("required", False, 2), ({"type": "function", "function": {"name": "get_weather"}}, True, 1), ("auto", True, 1)]:
    st, lines = sse("/v1/chat/completions", {"model": M, "messages": msgs, "tools": [WEATHER, TIME], "tool_choice": tc,
        "parallel_tool_calls": ptc, "n": n, "max_tokens": 120, "temperature": 0.7 if n > 1 else 0, "seed": 3, "stream": True,
        "stream_options": {"include_usage": True}})
    print("==", tc, ptc, n, st)
    data = [l[6:] for l in lines if l.startswith("data: ")]
    print("last:", data[-1], "non-data lines:", [l for l in lines if l and not l.startswith("data: ")])
    chunks = [json.loads(d) for d in data if d != "[DONE]"]
    per = {}
    for ch in chunks:
        if not ch["choices"]:
            print("usage chunk:", ch.get("usage")); continue
        assert ch.get("usage") is None, ch
        for c in ch["choices"]:
            per.setdefault(c["index"], []).append(c)
    for i, cs in per.items():
        roles = [k for k, c in enumerate(cs) if c["delta"].get("role")]
        fins = [(k, c["finish_reason"]) for k, c in enumerate(cs) if c.get("finish_reason")]
        calls = {}
        for c in cs:
            for t in c["delta"].get("tool_calls") or []:
                e = calls.setdefault(t["index"], {"ids": [], "names": [], "args": ""})
                if t.get("id"): e["ids"].append(t["id"])
                if t.get("type"): e.setdefault("types", []).append(t["type"])
                f = t.get("function") or {}
                if f.get("name"): e["names"].append(f["name"])
                if f.get("arguments"): e["args"] += f["arguments"]
        content = "".join(c["delta"].get("content") or "" for c in cs)
        print(f" choice {i}: nchunks={len(cs)} role_at={roles} finish={fins} first_delta={cs[0]['delta']} content={content!r}")
        for k, e in calls.items():
            try: ok = json.loads(e["args"])
            except Exception as ex: ok = f"INVALID {ex}"
            print(f"   call {k}: {e} parsed={ok}")
