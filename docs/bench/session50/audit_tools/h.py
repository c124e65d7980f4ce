import json, httpx, sys
URL = "http://127.0.0.1:8850/v1/chat/completions"
C = httpx.Client(timeout=120)
W = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
T = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}}
MSG = [{"role": "user", "content": "What's the weather in Paris?"}]
def post(body, url=URL):
    body = {"model": "SmolLM2-135M-Instruct", "max_tokens": 40, "temperature": 0, **body}
    r = C.post(url, json=body)
    try: j = r.json()
    except Exception: j = r.text
    return r.status_code, j
def stream(body, url=URL):
    body = {"model": "SmolLM2-135M-Instruct", "max_tokens": 40, "temperature": 0, **body, "stream": True}
    chunks = []
    with C.stream("POST", url, json=body) as r:
        if r.status_code != 200:
            return r.status_code, r.read().decode()
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = line[6:]
                if d == "[DONE]": break
                chunks.append(json.loads(d))
    return 200, chunks
def assemble(chunks):
    content, calls, fr = "", {}, {}
    for c in chunks:
        if "error" in c: return {"error": c}
        for ch in c["choices"]:
            d = ch["delta"]
            content += d.get("content") or ""
            for tc in d.get("tool_calls") or []:
                e = calls.setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
                if tc.get("id"): e["id"] = tc["id"]
                f = tc.get("function", {})
                e["name"] += f.get("name") or ""
                e["arguments"] += f.get("arguments") or ""
            if ch.get("finish_reason"): fr[ch["index"]] = ch["finish_reason"]
    return {"content": content, "calls": [calls[k] for k in sorted(calls)], "finish": fr}
def show(label, x):
    print(f"== {label}:", json.dumps(x, ensure_ascii=False)[:1500])
