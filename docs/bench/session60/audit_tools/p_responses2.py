from common import *
import json
body = {"model": M, "input": "A cat as JSON", "max_output_tokens": 60, "temperature": 0, "stream": True,
    "text": {"format": {"type": "json_schema", "name": "cat", "schema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}, "strict": True}}}
st, lines = sse("/v1/responses", body)
for l in lines:
    if l.startswith("event:") : print(l, end=" | ")
    if l.startswith("data:"):
        d = json.loads(l[5:])
        if d["type"] in ("response.completed", "response.incomplete", "response.failed", "error", "response.output_text.done"): print("\n", json.dumps(d)[:600])
print()
b2 = dict(body); b2.pop("stream")
r = post("/v1/responses", b2).json()
print("non-stream:", r["status"], r.get("incomplete_details"), r.get("error"), [o.get("content") for o in r["output"]])
