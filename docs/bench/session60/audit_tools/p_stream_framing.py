from common import *
import json
msgs = [{"role": "user", "content": "Count from one to five."}]
def run(body, label):
    st, lines = sse("/v1/chat/completions", body)
    if st != 200:
        show(label + " HTTP", (st, lines)); return
    data = [l for l in lines if l.startswith("data: ")]
    other = [l for l in lines if l and not l.startswith("data: ")]
    chunks = [json.loads(l[6:]) for l in data if l != "data: [DONE]"]
    print("==", label, "nchunks", len(chunks), "last raw:", data[-1], "other:", other[:3])
    ids = {c["id"] for c in chunks}; objs = {c["object"] for c in chunks}; created = {c["created"] for c in chunks}
    print("  ids", len(ids), "objs", objs, "created", len(created), "sysfp", {c.get("system_fingerprint") for c in chunks})
    per = {}
    for k, c in enumerate(chunks):
        if not c["choices"]:
            print(f"  chunk {k}/{len(chunks)} no choices; usage={c.get('usage')}")
        for ch in c["choices"]:
            per.setdefault(ch["index"], []).append((k, ch, c.get("usage")))
    order = [ch["index"] for c in chunks for ch in c["choices"]]
    print("  choice order (first 30):", order[:30])
    for i, lst in per.items():
        roles = [k for k, ch, u in lst if "role" in ch["delta"] and ch["delta"]["role"]]
        fins = [(k, ch["finish_reason"], ch["delta"]) for k, ch, u in lst if ch.get("finish_reason")]
        lps = [ch.get("logprobs") for k, ch, u in lst]
        usages = [u for k, ch, u in lst]
        txt = "".join(ch["delta"].get("content") or "" for k, ch, u in lst)
        print(f"  choice {i}: role_chunks={roles} first_delta={lst[0][1]['delta']} finishes={fins} text={txt!r}")
        print(f"    logprobs per chunk: {[None if l is None else len(l.get('content') or []) for l in lps][:20]} usage-in-choice-chunks: {set(json.dumps(u) for u in usages)}")
run({"model": M, "messages": msgs, "max_tokens": 12, "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}, "include_usage")
run({"model": M, "messages": msgs, "max_tokens": 12, "temperature": 0, "stream": True, "stream_options": {"include_usage": False}}, "include_usage false")
run({"model": M, "messages": msgs, "max_tokens": 12, "temperature": 0, "stream": True}, "no stream_options")
run({"model": M, "messages": msgs, "max_tokens": 8, "temperature": 1, "seed": 1, "n": 3, "stream": True, "stream_options": {"include_usage": True}}, "n=3")
run({"model": M, "messages": msgs, "max_tokens": 6, "temperature": 0, "stream": True, "logprobs": True, "top_logprobs": 2}, "logprobs")
run({"model": M, "messages": msgs, "max_tokens": 6, "temperature": 0, "stream": True, "stream_options": {"continuous_usage_stats": True}}, "continuous_usage_stats")
run({"model": M, "messages": msgs, "max_tokens": 6, "temperature": 0, "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": False}}, "continuous false")
run({"model": M, "messages": msgs, "max_tokens": 20, "temperature": 0, "stream": True, "stop": ["three"]}, "stop")
# completions endpoint
st, lines = sse("/v1/completions", {"model": M, "prompt": ["One, two,", "A, B,"], "max_tokens": 5, "temperature": 0, "n": 2, "stream": True, "stream_options": {"include_usage": True}})
ch = [json.loads(l[6:]) for l in lines if l.startswith("data: ") and l != "data: [DONE]"]
print("== completions 2 prompts n=2: indices", [c["index"] for x in ch for c in x["choices"]], "last", ch[-1])
