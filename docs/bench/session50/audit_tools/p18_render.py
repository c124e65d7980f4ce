from h import *
W2 = {"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": W["function"]["parameters"]}}
m = [{"role": "system", "content": "Be brief."},
     {"role": "user", "content": "Weather in Paris and Rome?"},
     {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "A", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "B", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}]},
     {"role": "tool", "tool_call_id": "B", "content": "rain"},
     {"role": "tool", "tool_call_id": "A", "content": "sun"}]
r = C.post("http://127.0.0.1:8850/tokenize", json={"messages": m, "tools": [W2], "return_token_strs": False})
ids = r.json()["tokens"]
r2 = C.post("http://127.0.0.1:8850/detokenize", json={"tokens": ids})
print(r2.json()["prompt"])
