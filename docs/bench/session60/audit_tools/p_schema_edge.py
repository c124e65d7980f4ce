from common import *
import json
msgs = [{"role": "user", "content": "Give me a JSON object describing a cat with a long description."}]
SCH = {"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"}, "legs": {"type": "integer"}},
       "required": ["name", "description", "legs"], "additionalProperties": False}
RF = {"type": "json_schema", "json_schema": {"name": "cat", "schema": SCH, "strict": True}}
# 1. max_tokens cut mid-JSON
r = client.chat.completions.create(model=M, messages=msgs, max_tokens=8, temperature=0, response_format=RF)
show("max_tokens=8 cut", {"finish": r.choices[0].finish_reason, "content": r.choices[0].message.content, "usage": r.usage.completion_tokens})
# 2. stop string with schema
for stop in ['"legs"', ",", "}"]:
    r = client.chat.completions.create(model=M, messages=msgs, max_tokens=120, temperature=0, response_format=RF, stop=[stop])
    show(f"stop={stop!r}", {"finish": r.choices[0].finish_reason, "content": r.choices[0].message.content})
# 3. logprobs with schema
r = client.chat.completions.create(model=M, messages=msgs, max_tokens=60, temperature=0, response_format=RF, logprobs=True, top_logprobs=2)
lp = r.choices[0].logprobs.content
txt = r.choices[0].message.content
show("logprobs", {"content": txt, "n_lp": len(lp), "usage_ct": r.usage.completion_tokens, "joined==content": "".join(t.token for t in lp) == txt,
                  "first": [(t.token, round(t.logprob, 3), [(x.token, round(x.logprob, 3)) for x in t.top_logprobs]) for t in lp[:4]]})
# 4. streamed structured output
st, lines = sse("/v1/chat/completions", {"model": M, "messages": msgs, "max_tokens": 200, "temperature": 0, "response_format": RF, "stream": True})
data = [json.loads(l[6:]) for l in lines if l.startswith("data: ") and l != "data: [DONE]"]
txt = "".join(c["choices"][0]["delta"].get("content") or "" for c in data if c["choices"])
show("stream schema", {"content": txt, "finish": [c["choices"][0]["finish_reason"] for c in data if c["choices"]][-1]})
try: json.loads(txt); print("stream json ok")
except Exception as e: print("stream json INVALID", e)
# 5. json_object with max_tokens cut
r = client.chat.completions.create(model=M, messages=msgs, max_tokens=5, temperature=0, response_format={"type": "json_object"})
show("json_object cut", {"finish": r.choices[0].finish_reason, "content": r.choices[0].message.content})
# 6. n=2 with schema
r = client.chat.completions.create(model=M, messages=msgs, max_tokens=120, temperature=1, seed=2, n=2, response_format=RF)
for c in r.choices:
    try: json.loads(c.message.content); ok = "ok"
    except Exception as e: ok = f"INVALID {e}"
    show(f"n=2 choice {c.index}", {"finish": c.finish_reason, "content": c.message.content, "json": ok})
