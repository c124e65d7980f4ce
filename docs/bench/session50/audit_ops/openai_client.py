"""What the official openai client meets: list/retrieve models, streaming, error classes, retries on 503, request id header."""
import sys, time, openai
B = sys.argv[1]
c = openai.OpenAI(base_url=B + "/v1", api_key=sys.argv[2] if len(sys.argv) > 2 else "none", max_retries=0)
print("models:", [m.id for m in c.models.list()])
m = c.models.list().data[0].id
print("retrieve:", c.models.retrieve(m).id)
raw = c.chat.completions.with_raw_response.create(model=m, messages=[{"role": "user", "content": "Hi"}], max_tokens=3)
print("headers:", {k: v for k, v in raw.headers.items() if k.lower() in ("x-request-id", "openai-processing-ms", "x-ratelimit-limit-requests")}, "request_id attr:", raw.request_id if hasattr(raw, "request_id") else None)
s = c.chat.completions.create(model=m, messages=[{"role": "user", "content": "Hi"}], max_tokens=3, stream=True, stream_options={"include_usage": True})
ids = set(); last = None
for ch in s:
    ids.add(ch.id); last = ch
print("stream ids:", len(ids), "usage:", last.usage)
for kw, what in [({"model": "nope"}, "unknown model"), ({"model": m, "max_tokens": -1}, "bad max_tokens"), ({"model": m, "max_tokens": 100000}, "over context")]:
    try:
        c.chat.completions.create(messages=[{"role": "user", "content": "Hi"}], **kw)
    except openai.APIStatusError as e:
        print(what, "->", type(e).__name__, e.status_code, "code=", e.code, "param=", e.param, "type=", e.type, "|", e.message[:120])
try:
    c.embeddings.create(model=m, input="hi")
except openai.APIStatusError as e:
    print("embeddings ->", type(e).__name__, e.status_code, e.message[:80])
try:
    c.responses.create(model=m, input="hi")
except openai.APIStatusError as e:
    print("responses ->", type(e).__name__, e.status_code, e.message[:80])
# stream with mid-stream error? stream over context
try:
    s = c.completions.create(model=m, prompt="Hi", max_tokens=100000, stream=True)
    for ch in s: pass
except openai.APIStatusError as e:
    print("stream over-context ->", type(e).__name__, e.status_code, e.message[:80])
