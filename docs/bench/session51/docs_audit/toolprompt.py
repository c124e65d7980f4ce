import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=60)
weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
for msgs in ([{"role": "user", "content": "hi"}], [{"role": "system", "content": "SYS"}, {"role": "user", "content": "hi"}]):
    ids = c.post(B+"/tokenize", json={"messages": msgs, "tools": [weather]}).json()["tokens"]
    print(c.post(B+"/detokenize", json={"tokens": ids}).json()["prompt"])
    print("=======")
