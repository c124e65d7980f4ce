import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
M = "SmolLM2-135M-Instruct"
r = c.responses.create(model=M, input="hi", max_output_tokens=2, store=False)
print("store echo:", r.store)
for f in (lambda: c.responses.retrieve(r.id), lambda: c.responses.input_items.list(r.id), lambda: c.responses.create(model=M, input="x", previous_response_id=r.id, max_output_tokens=2)):
    try: f(); print("200?!")
    except openai.APIStatusError as e: print(e.status_code, e.body.get("code"), e.body.get("param"))
# non-background stream: retrieve while it runs
import threading, time
s = c.responses.create(model=M, input="Write a long story", max_output_tokens=200, stream=True)
rid = None
for e in s:
    if e.type == "response.created": rid = e.response.id
    if e.type == "response.output_text.delta": break
try: print("retrieve while streaming:", c.responses.retrieve(rid).status)
except openai.APIStatusError as e: print("retrieve while streaming:", e.status_code, e.body.get("code"))
s.close()
time.sleep(1)
try: print("after client left:", c.responses.retrieve(rid).status)
except openai.APIStatusError as e: print("after client left:", e.status_code)
