# is "format": "uri" enforced? bound the string with maxLength so it must close; a URI needs "scheme:"
from common import *
for seed in range(4):
    sch = {"type": "object", "properties": {"a": {"type": "string", "format": "uri", "maxLength": 10}}, "required": ["a"], "additionalProperties": False}
    r = post("/v1/chat/completions", {"model": M, "messages": [{"role": "user", "content": "Reply with JSON whose a is the word banana"}], "max_tokens": 30, "temperature": 1, "seed": seed,
             "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": sch}}})
    j = r.json(); print(r.status_code, (j.get("error") or {}).get("message") or j["choices"][0]["message"]["content"])
