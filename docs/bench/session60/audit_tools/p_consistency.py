# streamed vs non-streamed: same text/tool calls/finish under greedy decoding
from common import *
import json
def gather(body):
    st, lines = sse("/v1/chat/completions", dict(body, stream=True))
    if st != 200: return ("HTTP", st, lines)
    chunks = [json.loads(l[6:]) for l in lines if l.startswith("data: ") and l != "data: [DONE]"]
    res = {}
    for ch in chunks:
        for c in ch["choices"]:
            e = res.setdefault(c["index"], {"content": None, "calls": {}, "finish": None})
            d = c["delta"]
            if d.get("content") is not None: e["content"] = (e["content"] or "") + d["content"]
            for t in d.get("tool_calls") or []:
                k = e["calls"].setdefault(t["index"], {"name": "", "arguments": ""})
                f = t.get("function") or {}
                k["name"] += f.get("name") or ""; k["arguments"] += f.get("arguments") or ""
            if c.get("finish_reason"): e["finish"] = c["finish_reason"]
    return {i: (e["content"] or None, [(v["name"], v["arguments"]) for _, v in sorted(e["calls"].items())], e["finish"]) for i, e in res.items()}
def whole(body):
    r = post("/v1/chat/completions", body)
    if r.status_code != 200: return ("HTTP", r.status_code, r.text[:200])
    return {c["index"]: (c["message"].get("content"), [(t["function"]["name"], t["function"]["arguments"]) for t in c["message"].get("tool_calls") or []], c["finish_reason"]) for c in r.json()["choices"]}
SCH = {"type": "object", "properties": {"name": {"type": "string"}, "legs": {"type": "integer"}}, "required": ["name", "legs"], "additionalProperties": False}
cases = {
 "plain stop": {"messages": [{"role": "user", "content": "Count from one to ten in digits."}], "max_tokens": 40, "stop": ["5.", "xyz"]},
 "stop never matches partial": {"messages": [{"role": "user", "content": "Count from one to ten in digits."}], "max_tokens": 15, "stop": ["3. 4"]},
 "unicode": {"messages": [{"role": "user", "content": "Write the word 'cat' in Chinese and Japanese and add three emoji."}], "max_tokens": 40},
 "tools required ptc": {"messages": [{"role": "user", "content": "Weather in Paris and Rome?"}], "tools": [WEATHER, TIME], "tool_choice": "required", "max_tokens": 60},
 "tools required cut": {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER], "tool_choice": "required", "max_tokens": 9},
 "tools stop in args": {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER], "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 40, "stop": ["ris"]},
 "tools named": {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "max_tokens": 60},
 "schema": {"messages": [{"role": "user", "content": "A cat as JSON"}], "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": SCH}}, "max_tokens": 60},
 "auto+schema": {"messages": [{"role": "user", "content": "A cat as JSON"}], "tools": [WEATHER], "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": SCH}}, "max_tokens": 60},
 "none+schema": {"messages": [{"role": "user", "content": "A cat as JSON"}], "tools": [WEATHER], "tool_choice": "none", "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": SCH}}, "max_tokens": 60},
 "n2 tools seed": {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER], "tool_choice": "required", "parallel_tool_calls": False, "n": 2, "temperature": 1, "seed": 7, "max_tokens": 40},
}
for k, b in cases.items():
    body = {"model": M, "temperature": 0, **b}
    a, s = whole(body), gather(body)
    print("==", k, "MATCH" if a == s else "MISMATCH")
    print("  whole :", a); 
    if a != s: print("  stream:", s)
