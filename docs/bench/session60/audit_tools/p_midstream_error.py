# a dead end mid-answer: choice ["abc"] with allowed_token_ids = the tokens of "a" and "b" only;
# the first two tokens are generated, the third cannot be.
from common import *
import json
ids = [post("/tokenize", {"model": M, "prompt": ch, "add_special_tokens": False}).json()["tokens"][0] for ch in "ab"]
print("allowed", ids)
body = {"model": M, "messages": [{"role": "user", "content": "say abc"}], "max_tokens": 10, "temperature": 0,
        "structured_outputs": {"choice": ["abc"]}, "allowed_token_ids": ids}
r = post("/v1/chat/completions", body); print("non-stream:", r.status_code, r.text[:400])
st, lines = sse("/v1/chat/completions", dict(body, stream=True, n=2, stream_options={"include_usage": True}))
print("stream:", st); [print("  ", l) for l in lines if l]
try:
    for ch in client.chat.completions.create(model=M, messages=body["messages"], max_tokens=10, stream=True, extra_body={k: body[k] for k in ("structured_outputs", "allowed_token_ids")}):
        print("  sdk chunk:", ch.choices[0].delta.content if ch.choices else ch.usage)
except Exception as e:
    print("  SDK raised:", type(e).__name__, e)
