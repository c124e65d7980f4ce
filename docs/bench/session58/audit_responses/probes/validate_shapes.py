# every streamed event and every Response/Conversation object validated against the openai SDK's own types
import json, httpx, pydantic
from openai.types.responses import ResponseStreamEvent, Response, ResponseItem
from openai.types.conversations import Conversation, ConversationItem
ev_ad = pydantic.TypeAdapter(ResponseStreamEvent)
item_ad = pydantic.TypeAdapter(ConversationItem)
B = "http://127.0.0.1:18101/v1"
tools = [{"type": "function", "name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}}]
bodies = [
    {"input": "hi", "max_output_tokens": 4, "stream": True},
    {"input": "hi", "max_output_tokens": 40, "stream": True, "tools": tools, "tool_choice": "required"},
    {"input": "hi", "max_output_tokens": 4, "stream": True, "include": ["message.output_text.logprobs"], "top_logprobs": 1},
    {"input": "hi", "max_output_tokens": 4, "stream": True, "background": True},
]
problems = 0
for body in bodies:
    with httpx.stream("POST", B + "/responses", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if not line.startswith("data: "): continue
            d = json.loads(line[6:])
            try:
                ev_ad.validate_python(d)
            except pydantic.ValidationError as e:
                problems += 1; print("EVENT", d["type"], str(e)[:600])
            if "response" in d:
                try: Response.model_validate(d["response"])
                except pydantic.ValidationError as e: problems += 1; print("RESPONSE in", d["type"], str(e)[:600])
                rid = d["response"]["id"]
    got = httpx.get(f"{B}/responses/{rid}").json()
    try: Response.model_validate(got)
    except pydantic.ValidationError as e: problems += 1; print("RETRIEVE", str(e)[:600])
    for it in httpx.get(f"{B}/responses/{rid}/input_items").json()["data"]:
        try: pydantic.TypeAdapter(ResponseItem).validate_python(it)
        except pydantic.ValidationError as e: problems += 1; print("INPUT_ITEM", str(e)[:600])
conv = httpx.post(B + "/conversations", json={"items": [{"role": "user", "content": "x"}]}).json()
Conversation.model_validate(conv)
httpx.post(B + "/responses", json={"input": "hi", "max_output_tokens": 30, "conversation": conv["id"], "tools": tools, "tool_choice": "required"}, timeout=60)
for it in httpx.get(f"{B}/conversations/{conv['id']}/items").json()["data"]:
    try: item_ad.validate_python(it)
    except pydantic.ValidationError as e: problems += 1; print("CONV ITEM", it["type"], str(e)[:600])
print("problems:", problems)
