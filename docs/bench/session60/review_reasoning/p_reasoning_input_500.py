# HIGH: a `reasoning` input item (README: "A reasoning item sent back in input ... joins the
# answer after it") makes POST /v1/responses a 500 KeyError 'call_id' whenever the response is
# stored (store defaults to true), after the whole generation ran; same for
# POST /v1/conversations/{id}/items. Only store:false passes.
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
import httpx, openai
URL = "http://127.0.0.1:18331"
items = [{"role": "user", "content": "Hi"},
         {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "greet back"}]},
         {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
         {"role": "user", "content": "Bye"}]
for extra in ({}, {"store": False}, {"stream": True}, {"background": True}):
    with httpx.Client(base_url=URL, timeout=60) as h:   # fresh connection each (a 500 resets it)
        try:
            r = h.post("/v1/responses", json={"input": items, "max_output_tokens": 3, **extra})
        except Exception as e:
            print(extra, "->", type(e).__name__, str(e)[:150]); continue
        tail = r.text[-300:] if extra.get("stream") else r.text[:300]
        print(extra, "->", r.status_code, tail.replace("\n", " "))
        if extra.get("background") and r.status_code == 200:
            import time; time.sleep(2)
            g = h.get(f"/v1/responses/{r.json()['id']}")
            print("   GET after:", g.status_code, g.text[:300])
with httpx.Client(base_url=URL, timeout=60) as h:
    conv = h.post("/v1/conversations", json={}).json()["id"]
    r = h.post(f"/v1/conversations/{conv}/items", json={"items": items[1:3]})
    print("conversation items POST ->", r.status_code, r.text[:200])
with httpx.Client(base_url=URL, timeout=60) as h:
    r = h.post("/v1/conversations", json={"items": items})
    print("conversation create with items ->", r.status_code, r.text[:200])
oc = openai.OpenAI(base_url=URL + "/v1", api_key="x", max_retries=0)
try:
    oc.responses.create(model="model", input=items, max_output_tokens=3)
except Exception as e:
    print("openai SDK:", type(e).__name__, str(e)[:200])
