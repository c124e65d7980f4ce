import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=120)
def p(path, body): r = c.post(B+path, json=body); return r.status_code, r.json()
CO, CH = "/v1/completions", "/v1/chat/completions"
s, j = p(CO, {"prompt": "a", "max_tokens": 6, "temperature": 0, "logprobs": 0, "ignore_eos": True}); toks = j["choices"][0]["logprobs"]["tokens"]; print("greedy", toks)
ids = c.post(B+"/tokenize", json={"prompt": "a" + "".join(toks), "add_special_tokens": False}).json()["tokens"]; print("ids", ids)
# min_tokens: stop_token_ids = first generated token, min_tokens 3 => must not stop at 1
s, j = p(CO, {"prompt": "a", "max_tokens": 6, "temperature": 0, "stop_token_ids": [ids[1]], "min_tokens": 3, "ignore_eos": True, "logprobs": 0}); print("min_tokens", s, j["choices"][0]["logprobs"]["tokens"] if s == 200 else j)
# bad_words: ban first greedy word
s, j = p(CO, {"prompt": "a", "max_tokens": 3, "temperature": 0, "bad_words": [toks[0].strip()], "logprobs": 0}); print("bad_words", toks[0], "->", j["choices"][0]["logprobs"]["tokens"])
s, j = p(CO, {"prompt": "a b c d e", "max_tokens": 1, "truncate_prompt_tokens": -1}); print("truncate -1", s, j.get("usage"))
s, j = p(CO, {"prompt": "a b c d e", "max_tokens": 1, "truncate_prompt_tokens": 3000}); print("truncate 3000", s, j.get("usage") or j)
tool = {"type": "function", "function": {"name": "pick", "parameters": {"type": "object", "properties": {"u": {"enum": ["c", "f"]}}, "required": ["u"], "additionalProperties": False}, "strict": True}}
s, j = p(CH, {"messages": [{"role": "user", "content": "x"}], "tools": [tool], "tool_choice": {"type": "function", "function": {"name": "pick"}}, "max_tokens": 40}); print("named", j["choices"][0]["finish_reason"], j["choices"][0]["message"])
s, j = p(CH, {"messages": [{"role": "user", "content": "x"}], "tools": [tool], "tool_choice": "required", "max_tokens": 40, "parallel_tool_calls": False}); print("required", j["choices"][0]["finish_reason"], j["choices"][0]["message"])
s, j = p(CH, {"messages": [{"role": "user", "content": "x"}], "tools": [tool], "tool_choice": "required", "max_tokens": 60, "parallel_tool_calls": True}); print("required parallel", j["choices"][0]["finish_reason"], len(j["choices"][0]["message"].get("tool_calls") or []))
# stop cutting a call
s, j = p(CH, {"messages": [{"role": "user", "content": "x"}], "tools": [tool], "tool_choice": "required", "max_tokens": 40, "parallel_tool_calls": False, "stop": ["\"u\""]}); print("stop in call", j["choices"][0]["finish_reason"], j["choices"][0]["message"])
# response_format + tools auto
sch = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
s, j = p(CH, {"messages": [{"role": "user", "content": "x"}], "tools": [tool], "max_tokens": 40, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": sch, "strict": True}}}); print("rf+auto", j["choices"][0]["finish_reason"], j["choices"][0]["message"])
# many alternatives: grammar that llguidance cannot follow
s, j = p(CO, {"prompt": "x", "max_tokens": 5, "structured_outputs": {"choice": [f"w{i}" for i in range(60000)]}}); print("60000 choices", s, json.dumps(j)[:300])
# grammar too long
s, j = p(CO, {"prompt": "x", "max_tokens": 5, "grammar": "root ::= \"" + "a" * 70000 + "\""}); print("grammar 70000", s, json.dumps(j)[:300])
# invalid regex
s, j = p(CO, {"prompt": "x", "max_tokens": 5, "guided_regex": "(("}); print("bad regex", s, json.dumps(j)[:300])
# deep schema
d = {"type": "integer"}
for _ in range(140): d = {"type": "array", "items": d}
s, j = p(CO, {"prompt": "x", "max_tokens": 5, "guided_json": d}); print("deep schema", s, json.dumps(j)[:300])
# stream with n=2 chat
with c.stream("POST", B+CH, json={"messages": [{"role": "user", "content": "x"}], "max_tokens": 2, "n": 2, "stream": True}) as r:
    lines = [l for l in r.iter_lines() if l.startswith("data:")]
print("chat stream n=2 indices", [json.loads(l[6:])["choices"][0]["index"] for l in lines if l != "data: [DONE]"])
# echo + max_tokens 0 with prompt filling the context
s, j = p(CO, {"prompt": [5] * 2048, "max_tokens": 0, "echo": True}); print("echo full ctx", s, json.dumps(j)[:200])
s, j = p(CO, {"prompt": [5] * 2047, "max_tokens": 0, "echo": True}); print("echo ctx-1", s, j.get("usage") if s == 200 else j)
