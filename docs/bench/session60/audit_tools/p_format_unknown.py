# string "format" values: which are enforced, which are accepted and ignored (JSON Schema: format is an annotation by default)
from common import *
import json
for fmt in ["date-time", "time", "ipv4", "uri", "iri", "no-such-format"]:
    sch = {"type": "object", "properties": {"a": {"type": "string", "format": fmt}}, "required": ["a"], "additionalProperties": False}
    r = post("/v1/chat/completions", {"model": M, "messages": [{"role": "user", "content": "Reply with JSON whose a is the word banana"}], "max_tokens": 30, "temperature": 0,
             "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": sch}}})
    j = r.json()
    print(f"{fmt:15}", r.status_code, (j.get("error") or {}).get("message") or j["choices"][0]["message"]["content"])
