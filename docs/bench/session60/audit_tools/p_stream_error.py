# errors after the stream started: grammar mask ∩ allowed_token_ids empty, mid-answer
from common import *
import json, openai
tok = post("/tokenize", {"model": M, "prompt": "hello world", "add_special_tokens": False}).json()["tokens"]
print("allowed ids", tok)
U = [{"role": "user", "content": "A cat as JSON"}]
SCH = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}
for label, extra in [("json_object", {"response_format": {"type": "json_object"}}), ("choice", {"structured_outputs": {"choice": ["yes", "no"]}}),
                     ("tools required", {"tools": [WEATHER], "tool_choice": "required"})]:
    body = {"model": M, "messages": U, "max_tokens": 10, "temperature": 0, "allowed_token_ids": tok, **extra}
    r = post("/v1/chat/completions", body)
    show(label + " non-stream", (r.status_code, r.text[:400]))
    st, lines = sse("/v1/chat/completions", dict(body, stream=True))
    show(label + " stream", (st, lines if st != 200 else [l for l in lines if l]))
# SDK view of an error event
try:
    s = client.chat.completions.create(model=M, messages=U, max_tokens=10, extra_body={"allowed_token_ids": tok, "structured_outputs": {"choice": ["yes", "no"]}}, stream=True)
    for ch in s: print("chunk", ch.choices[0].delta if ch.choices else ch)
except Exception as e:
    show("SDK raised", repr(e)[:400])
