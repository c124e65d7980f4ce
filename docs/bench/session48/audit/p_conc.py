import asyncio, httpx, json, time
BASE = "http://127.0.0.1:18401"
bad = [
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "logit_bias": {"99999": 1}}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "allowed_token_ids": [43868], "guided_choice": ["yes"]}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}}}], "tool_choice": "required", "max_tokens": 5}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "guided_regex": "a{1000000}"}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "guided_json": {"type": "object", "properties": {"a": {"$ref": "#/nope"}}}}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "guided_grammar": "root ::= root"}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "guided_grammar": "start: start"}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "string", "format": "nope-format"}}}}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "integer", "minimum": 5, "maximum": 1}}}}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "guided_json": {"type": "array", "minItems": 5, "maxItems": 1}}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "guided_json": {"enum": []}}),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "guided_json": {"not": {}}}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "stream": True, "guided_json": {"not": {}}}),
 ("/v1/completions", {"prompt": "x", "max_tokens": 4, "structured_outputs": {"regex": "[^\\s\\S]"}}),
]
async def victim(c, results):
    for i in range(12):
        r = await c.post("/v1/completions", json={"prompt": "hello world", "max_tokens": 8, "temperature": 0})
        results.append((r.status_code, r.json()["choices"][0]["text"] if r.status_code == 200 else r.text[:200]))
        await asyncio.sleep(0.1)
async def one(c, path, body):
    t = time.time()
    try:
        if body.get("stream"):
            async with c.stream("POST", path, json=body) as r:
                txt = (await r.aread()).decode()
                return r.status_code, txt[:300], time.time() - t
        r = await c.post(path, json=body)
        return r.status_code, r.text[:300], time.time() - t
    except Exception as e:
        return "EXC", repr(e), time.time() - t
async def main():
    async with httpx.AsyncClient(base_url=BASE, timeout=60) as c:
        res = []
        v = asyncio.create_task(victim(c, res))
        outs = await asyncio.gather(*[one(c, p, b) for p, b in bad])
        await v
        for (p, b), o in zip(bad, outs):
            print(o[0], f"{o[2]:.2f}s", p, json.dumps(b)[:120], "->", o[1][:250])
        print("victims:", set(res))
asyncio.run(main())
