C, CH = "/v1/completions", "/v1/chat/completions"
def comp(**kw): return {"prompt": "Hello", "max_tokens": 16, "temperature": 0, **kw}
def chat(**kw): return {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 16, "temperature": 0, **kw}
ids = [(i * 7919) % 40000 + 100 for i in range(2100)]
P = {}
P["baseline"] = (C, comp())
P["prompt_2049"] = (C, comp(prompt=ids[:2049]))
P["prompt_2048"] = (C, comp(prompt=ids[:2048], max_tokens=1))
P["prompt_2047_mt1"] = (C, comp(prompt=ids[:2047], max_tokens=1))
P["prompt_2047_mt2"] = (C, comp(prompt=ids[:2047], max_tokens=2))
P["prompt_logprobs_2000"] = (C, comp(prompt=ids[:2000], max_tokens=1, prompt_logprobs=20))
P["n128"] = (C, comp(n=128, max_tokens=64, temperature=1))
P["n129"] = (C, comp(n=129))
P["max_tokens_huge"] = (C, comp(max_tokens=10**12))
P["max_tokens_2040"] = (C, comp(max_tokens=2040, ignore_eos=True))
P["text_3_9MB"] = (C, comp(prompt="hello world " * 330000))
P["chat_3_9MB"] = (CH, chat(messages=[{"role": "user", "content": "hello world " * 330000}]))
P["chat_many_msgs"] = (CH, chat(messages=[{"role": "user", "content": "hi"}] * 150000))
P["tokenize_3_9MB"] = ("/tokenize", {"prompt": "hello world " * 330000})
P["tools_2000"] = (CH, chat(tools=[{"type": "function", "function": {"name": f"f{i}", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}} for i in range(2000)]))
P["tool_recursive"] = (CH, chat(tool_choice="required", tools=[{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {"n": {"$ref": "#/$defs/n"}}, "required": ["n"], "$defs": {"n": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["k"]}}}}}]))
P["tool_self_ref"] = (CH, chat(tool_choice="required", tools=[{"type": "function", "function": {"name": "t", "parameters": {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}}}]))
