# Responses history: output items sent back as input (as the openai SDK dumps them),
# previous_response_id, conversation (items listed, added), background+stream replay.
import sys, time, json; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
import openai
for name in URL:
    with client(name) as h:
        bias = {str(t): 100 for t in words(h)}
        oc = openai.OpenAI(base_url=URL[name] + "/v1", api_key="x")
        seed = next(s for s in range(40) if h.post("/v1/responses", json={"input": "Think", "seed": s, "temperature": 1.0,
                    "max_output_tokens": 12, "logit_bias": bias}).json()["output"][0]["type"] == "reasoning")
        body = {"input": "Think", "seed": seed, "temperature": 1.0, "max_output_tokens": 12, "logit_bias": bias}
        r = oc.responses.create(model="model", input="Think", temperature=1.0, max_output_tokens=12,
                                extra_body={"seed": seed, "logit_bias": bias})
        print(name, "seed", seed, "SDK output types:", [type(o).__name__ for o in r.output])
        # 1) output items sent back as input: see p_reasoning_input_500.py (500)
        # 2) previous_response_id
        x = h.post("/v1/responses", json={"input": "again", "previous_response_id": r.id, "max_output_tokens": 4})
        print("  previous_response_id:", x.status_code, x.text[:200] if x.status_code != 200 else "")
        ii = h.get(f"/v1/responses/{r.id}/input_items").json()
        print("  input_items of first:", [i["type"] for i in ii["data"]])
        # 3) conversation
        conv = h.post("/v1/conversations", json={}).json()
        a = h.post("/v1/responses", json={**body, "conversation": conv["id"]})
        print("  conversation turn 1:", a.status_code, a.text[:200] if a.status_code != 200 else "")
        items = h.get(f"/v1/conversations/{conv['id']}/items", params={"order": "asc"}).json()
        print("  conversation items:", [(i["type"], i.get("role")) for i in items["data"]])
        b = h.post("/v1/responses", json={"input": "again", "conversation": conv["id"], "max_output_tokens": 4})
        print("  conversation turn 2:", b.status_code, b.text[:200] if b.status_code != 200 else "")
        try:
            items = oc.conversations.items.list(conv["id"])
            print("  SDK lists conversation items:", [type(i).__name__ for i in items.data])
        except Exception as e:
            print("  SDK conversation items: ERROR", type(e).__name__, str(e)[:300])
        c = h.post("/v1/responses", json={"input": "again", "conversation": conv["id"], "max_output_tokens": 4})
        print("  conversation turn 3:", c.status_code, c.text[:200] if c.status_code != 200 else "")
        # 4) background + stream, then replay via GET ?stream=true, and SDK retrieve
        bg = sse(h.post("/v1/responses", json={**body, "background": True, "stream": True}).text)
        rid = bg[0]["response"]["id"]
        rep = sse(h.get(f"/v1/responses/{rid}", params={"stream": "true"}).text)
        print("  bg stream events == replay:", [e["type"] for e in bg] == [e["type"] for e in rep], len(bg), len(rep))
        rr = oc.responses.retrieve(rid)
        print("  SDK retrieve:", [type(o).__name__ for o in rr.output], rr.usage.output_tokens_details)
        # 5) SDK streaming helper
        with oc.responses.stream(model="model", input="Think", temperature=1.0, max_output_tokens=12,
                                 extra_body={"seed": seed, "logit_bias": bias}) as s:
            evs = list(s)
        fin = evs[-1].response
        print("  SDK stream final:", [(type(o).__name__, getattr(o, 'content', None) and o.content[0].text) for o in fin.output])
        cs = oc.chat.completions.create(model="model", messages=[{"role": "user", "content": "Think"}], temperature=1.0,
                                        max_tokens=12, seed=seed, logit_bias=bias, stream=True, stream_options={"include_usage": True})
        parts = list(cs)
        print("  SDK chat stream deltas reasoning:", "".join((c.choices[0].delta.model_extra or {}).get("reasoning") or "" for c in parts if c.choices), "| usage:", parts[-1].usage)
