# Responses: non-stream vs stream vs background (GET while running, GET after, replayed stream),
# reasoning_tokens; output items sent back as input (SDK model_dump), previous_response_id,
# conversation items.
import sys, time, json; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
def summary(resp):
    return [(i["type"], i.get("status"), (i.get("content") or [{}])[0].get("text")) for i in resp["output"]], resp["status"], resp["usage"] and resp["usage"]["output_tokens_details"]
for name in URL:
    with client(name) as h:
        bias = {str(t): 100 for t in words(h)}
        for seed in (9, 11, 3):
            body = {"input": "Think, then answer.", "seed": seed, "temperature": 1.0, "max_output_tokens": 12, "logit_bias": bias}
            ns = h.post("/v1/responses", json=body).json()
            ev = [e for e in sse(h.post("/v1/responses", json={**body, "stream": True}).text)]
            st = ev[-1]["response"]
            print(name, seed, "NS", summary(ns)); print("   ST", summary(st))
            types = [e["type"] for e in ev]
            print("   events:", [t.replace("response.", "") for t in types])
            # background: GET while running and after
            bg = h.post("/v1/responses", json={**body, "background": True, "max_output_tokens": 60}).json()
            snaps = []
            for _ in range(200):
                g = h.get(f"/v1/responses/{bg['id']}").json()
                snaps.append(summary(g))
                if g["status"] not in ("queued", "in_progress"): break
                time.sleep(0.01)
            mid = [s for s in snaps if s[1] == "in_progress" and s[0]]
            print("   BG mid-run snapshots with items:", mid[:2])
            print("   BG final", snaps[-1])
            rep = sse(h.get(f"/v1/responses/{bg['id']}", params={"stream": "true"}).text)
            print("   BG replay final", summary(rep[-1]["response"]) if rep else None)
            ns_bg = h.post("/v1/responses", json={**body, "max_output_tokens": 60}).json()
            print("   same request non-background", summary(ns_bg))
