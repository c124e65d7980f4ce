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
show("metadata 17", *post(CH, {"messages": M, "max_tokens": 1, "metadata": {str(i): "x" for i in range(17)}}))
show("metadata long val", *post(CH, {"messages": M, "max_tokens": 1, "metadata": {"a": "x"*513}}))
show("metadata long key", *post(CH, {"messages": M, "max_tokens": 1, "metadata": {"a"*65: "x"}}))
show("model wrong", *post(CH, {"messages": M, "max_tokens": 1, "model": "gpt-4"}))
show("model absent", *post(CO, {"prompt": "a", "max_tokens": 1}))
# completions default max_tokens 16
r, j = post(CO, {"prompt": "a", "ignore_eos": True}); print("completions default max_tokens:", j["usage"])
r, j = post(CH, {"messages": M, "ignore_eos": True, "max_tokens": None}); print("chat no max_tokens:", j.get("usage"), j["choices"][0]["finish_reason"] if "choices" in j else j)
show("max_completion_tokens mismatch", *post(CH, {"messages": M, "max_tokens": 2, "max_completion_tokens": 3}))
r, j = post(CH, {"messages": M, "max_tokens": 2, "max_completion_tokens": 2}); print("mct agree", r.status_code, j.get("usage"))
r, j = post(CO, {"prompt": "a", "n_predict": 3, "ignore_eos": True}); print("n_predict 3", r.status_code, j.get("usage"))
r, j = post(CO, {"prompt": "a", "n_predict": -1, "ignore_eos": True, "max_tokens": None}); print("n_predict -1", r.status_code, j.get("usage") if isinstance(j, dict) else j)
# n, usage counts prompt once
r, j = post(CO, {"prompt": "hello there", "n": 3, "max_tokens": 4, "ignore_eos": True, "seed": 5}); print("n=3", len(j["choices"]), j["usage"])
r2, j2 = post(CO, {"prompt": "hello there", "n": 3, "max_tokens": 4, "ignore_eos": True, "seed": 5}); print("same seed same text:", [c_["text"] for c_ in j["choices"]] == [c_["text"] for c_ in j2["choices"]])
r3, j3 = post(CO, {"prompt": "hello there", "n": 1, "max_tokens": 4, "ignore_eos": True, "seed": 6}); print("seed+1 == choice1:", j3["choices"][0]["text"] == j["choices"][1]["text"])
show("n=129", *post(CO, {"prompt": "a", "n": 129, "max_tokens": 1}))
show("best_of 2 n 1", *post(CO, {"prompt": "a", "best_of": 2, "max_tokens": 1}))
show("best_of 2 n 2", *post(CO, {"prompt": "a", "best_of": 2, "n": 2, "max_tokens": 1}))
# stop
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "ignore_eos": True, "temperature": 0}); t = j["choices"][0]["text"]; print("greedy text", repr(t))
w = t[3:6]
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "ignore_eos": True, "temperature": 0, "stop": w}); print("stop", repr(w), repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"])
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "ignore_eos": True, "temperature": 0, "stop": [""]}); print("stop empty", repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"])
show("stop 65", *post(CO, {"prompt": "a", "max_tokens": 1, "stop": ["x"+str(i) for i in range(65)]}))
show("stop 16385 chars", *post(CO, {"prompt": "a", "max_tokens": 1, "stop": ["x"*16385]}))
# stop_token_ids
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "ignore_eos": True, "temperature": 0, "logprobs": 0})
toks = j["choices"][0]["logprobs"]["tokens"]; print("tokens", toks)
tid = c.post(B+"/tokenize", json={"prompt": toks[2], "add_special_tokens": False}).json()["tokens"]
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "ignore_eos": True, "temperature": 0, "stop_token_ids": tid[:1]}); print("stop_token_ids", tid, repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"], j["usage"])
show("stop_token_ids out of vocab", *post(CO, {"prompt": "a", "max_tokens": 1, "stop_token_ids": [10**6]}))
# logprobs completions
r, j = post(CO, {"prompt": "a b", "max_tokens": 2, "logprobs": 2, "echo": True}); print("echo+logprobs", json.dumps(j["choices"][0]["logprobs"])[:500])
show("logprobs 21", *post(CO, {"prompt": "a", "max_tokens": 1, "logprobs": 21}))
r, j = post(CH, {"messages": M, "max_tokens": 2, "logprobs": True, "top_logprobs": 2}); print("chat logprobs", json.dumps(j["choices"][0]["logprobs"])[:400])
show("top_logprobs w/o logprobs", *post(CH, {"messages": M, "max_tokens": 2, "top_logprobs": 2}))
r, j = post(CH, {"messages": M, "max_tokens": 2, "prompt_logprobs": 1}); print("chat prompt_logprobs keys", [k for k in j if "logprob" in k], str(j.get("prompt_logprobs"))[:200])
r, j = post(CO, {"prompt": "a b", "max_tokens": 2, "prompt_logprobs": 1}); print("compl prompt_logprobs", [k for k in j["choices"][0]], str(j["choices"][0].get("prompt_logprobs"))[:200])
show("prompt_logprobs + stream", *post(CO, {"prompt": "a", "max_tokens": 1, "prompt_logprobs": 1, "stream": True}))
# request_id and X-Request-Id
r, j = post(CO, {"prompt": "a", "max_tokens": 1, "request_id": "abc"}); print("request_id", j["id"], r.headers.get("x-request-id"))
r, j = post(CO, {"prompt": "a", "max_tokens": 1}, headers={"X-Request-Id": "hdr1"}); print("X-Request-Id", j["id"], r.headers.get("x-request-id"))
r, j = post(CH, {"messages": M, "max_tokens": 1}, headers={"X-Request-Id": "hdr2"}); print("X-Request-Id chat", j["id"], r.headers.get("x-request-id"))
show("request_id empty", *post(CO, {"prompt": "a", "max_tokens": 1, "request_id": ""}))
# stream_options without stream
show("stream_options no stream", *post(CO, {"prompt": "a", "max_tokens": 1, "stream_options": {"include_usage": True}}))
# temperature > 2
r, j = post(CO, {"prompt": "a", "max_tokens": 1, "temperature": 5}); print("temp 5", r.status_code)
# penalties range
show("presence 3", *post(CO, {"prompt": "a", "max_tokens": 1, "presence_penalty": 3}))
show("rep pen 0", *post(CO, {"prompt": "a", "max_tokens": 1, "repetition_penalty": 0}))
show("repeat_last_n 5 with penalty", *post(CO, {"prompt": "a", "max_tokens": 1, "repeat_last_n": 5, "repeat_penalty": 1.1}))
show("repeat_last_n -1 with penalty", *post(CO, {"prompt": "a", "max_tokens": 1, "repeat_last_n": -1, "repeat_penalty": 1.1}))
show("logit_bias 101", *post(CO, {"prompt": "a", "max_tokens": 1, "logit_bias": {"5": 101}}))
r, j = post(CO, {"prompt": "a", "max_tokens": 3, "logit_bias": {"30": 100}, "ignore_eos": True}); print("logit_bias 30:+100", repr(j["choices"][0]["text"]))
r, j = post(CO, {"prompt": "a", "max_tokens": 3, "allowed_token_ids": [30, 31], "ignore_eos": True, "logprobs": 0}); print("allowed", j["choices"][0]["logprobs"]["tokens"])
r, j = post(CO, {"prompt": "a", "max_tokens": 3, "truncate_prompt_tokens": 2}); print("truncate 2 of 'a b c d'", end=" "); r, j = post(CO, {"prompt": "a b c d", "max_tokens": 1, "truncate_prompt_tokens": 2}); print(j.get("usage"))
r, j = post(CO, {"prompt": ["a", "b c"], "max_tokens": 1, "n": 2}); print("list prompts n2", len(j["choices"]), [c_["index"] for c_ in j["choices"]], j["usage"])
r, j = post(CO, {"prompt": [[1, 2, 3], [4, 5]], "max_tokens": 1}); print("token prompts", len(j["choices"]), j["usage"])
# response_format
r, j = post(CH, {"messages": M, "max_tokens": 40, "response_format": {"type": "json_object"}}); print("json_object", repr(j["choices"][0]["message"]["content"])[:200], j["choices"][0]["finish_reason"])
sch = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}
r, j = post(CH, {"messages": M, "max_tokens": 40, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": sch, "strict": True}}}); print("json_schema strict", repr(j["choices"][0]["message"]["content"])[:200], j["choices"][0]["finish_reason"])
show("strict open schema", *post(CH, {"messages": M, "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "strict": True}}}))
show("bad name", *post(CH, {"messages": M, "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {"name": "x y", "schema": sch}}}))
show("json_schema with type text", *post(CH, {"messages": M, "max_tokens": 4, "response_format": {"type": "text", "json_schema": {"name": "x", "schema": sch}}}))
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "guided_choice": ["yes", "no"]}); print("guided_choice", repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"])
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "structured_outputs": {"regex": "[0-9]{3}"}}); print("regex", repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"])
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "grammar": 'root ::= "ab" | "cd"'}); print("gbnf", repr(j["choices"][0]["text"]), j["choices"][0]["finish_reason"])
r, j = post(CO, {"prompt": "a", "max_tokens": 10, "grammar": ''}); print("gbnf empty", r.status_code)
r, j = post(CO, {"prompt": "a", "max_tokens": 30, "json_schema": sch}); print("llama json_schema", repr(j["choices"][0]["text"]))
show("two structured", *post(CO, {"prompt": "a", "max_tokens": 1, "structured_outputs": {"regex": "a", "choice": ["b"]}}))
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
