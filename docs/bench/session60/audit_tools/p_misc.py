from common import *
import json
U = [{"role": "user", "content": "A tree as JSON"}]
REC = {"type": "object", "$defs": {"Node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "maxItems": 2}}, "required": ["v", "kids"], "additionalProperties": False}},
       "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"], "additionalProperties": False}
r = post("/v1/chat/completions", {"model": M, "messages": U, "max_tokens": 80, "temperature": 0, "response_format": {"type": "json_schema", "json_schema": {"name": "t", "strict": True, "schema": REC}}})
show("recursive strict", (r.status_code, r.json().get("error") or r.json()["choices"][0]["message"]["content"]))
# strict with nullable union
NU = {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}, "required": ["a", "b"], "additionalProperties": False}
r = post("/v1/chat/completions", {"model": M, "messages": U, "max_tokens": 40, "temperature": 0, "response_format": {"type": "json_schema", "json_schema": {"name": "t", "strict": True, "schema": NU}}})
show("strict nullable", (r.status_code, r.json().get("error") or r.json()["choices"][0]["message"]["content"]))
# completions endpoint with response_format + echo
r = post("/v1/completions", {"model": M, "prompt": "JSON for a dog: ", "max_tokens": 40, "temperature": 0, "echo": True, "response_format": {"type": "json_schema", "json_schema": {"name": "d", "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}}}})
show("completions rf + echo", (r.status_code, r.json().get("error") or (r.json()["choices"][0]["text"], r.json()["choices"][0]["finish_reason"])))
# tool message content as parts rendered?
hist = [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "PART-ONE"}, {"type": "text", "text": "PART-TWO"}]}]
t = post("/tokenize", {"model": M, "messages": hist, "tools": [WEATHER]}).json()
show("tool parts rendered", post("/detokenize", {"model": M, "tokens": t["tokens"]}).json()["prompt"][-120:])
# assistant with content AND tool_calls
hist2 = [hist[0], dict(hist[1], content="Let me check."), dict(hist[2], content="sunny")]
t = post("/tokenize", {"model": M, "messages": hist2, "tools": [WEATHER]}).json()
show("assistant content+calls rendered", post("/detokenize", {"model": M, "tokens": t["tokens"]}).json()["prompt"][-230:])
# tool_call type other than function in history
hist3 = [hist[0], {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "custom", "custom": {"name": "x", "input": "y"}}]}, dict(hist[2], content="sunny")]
r = post("/v1/chat/completions", {"model": M, "messages": hist3, "max_tokens": 3})
show("history custom tool call", (r.status_code, r.text[:250]))
# bad_words vs grammar
r = post("/v1/chat/completions", {"model": M, "messages": U, "max_tokens": 10, "temperature": 0, "structured_outputs": {"choice": ["yes", "no"]}, "bad_words": ["yes", "no"]})
show("bad_words vs choice", (r.status_code, r.text[:250]))
# logit_bias vs choice
tid = post("/tokenize", {"model": M, "prompt": "yes", "add_special_tokens": False}).json()["tokens"]
r = post("/v1/chat/completions", {"model": M, "messages": [{"role": "user", "content": "Say yes"}], "max_tokens": 10, "temperature": 0, "structured_outputs": {"choice": ["yes", "no"]}, "logit_bias": {str(tid[0]): -100}})
show("logit_bias -100 on 'yes' with choice", (r.status_code, r.json().get("error") or r.json()["choices"][0]["message"]["content"], tid))
