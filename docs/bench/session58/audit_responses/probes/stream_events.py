# the streamed event sequence of /v1/responses, via the SDK (create stream=True and .stream())
import openai
c = openai.OpenAI(base_url="http://127.0.0.1:18101/v1", api_key="x")
s = c.responses.create(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=6, temperature=0, stream=True)
for e in s:
    d = e.model_dump()
    extra = {k: d[k] for k in ("output_index", "content_index", "item_id", "delta") if k in d}
    if "response" in d: extra["status"] = d["response"]["status"]; extra["usage"] = d["response"]["usage"] is not None
    if "item" in d: extra["item"] = (d["item"]["type"], d["item"]["status"], d["item"].get("content"))
    print(d["sequence_number"], type(e).__name__, e.type, extra)
print("--- .stream() helper")
with c.responses.stream(model="SmolLM2-135M-Instruct", input="Say hi", max_output_tokens=6, temperature=0) as st:
    for e in st:
        pass
    final = st.get_final_response()
print(final.status, repr(final.output_text), final.usage)
