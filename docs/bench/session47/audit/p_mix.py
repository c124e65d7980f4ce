import json, random, threading, time, httpx
import os
B = f"http://127.0.0.1:{os.environ.get('AUDIT_PORT', '18101')}"  # 18201 for audit2/
def post(path, body, stream=False):
    try:
        if stream:
            text = ""; fin = None
            with httpx.stream("POST", B + path, json=body, timeout=120) as r:
                if r.status_code != 200: return r.status_code, r.read().decode()[:200]
                for line in r.iter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        j = json.loads(line[6:])
                        if "error" in j: return "STREAMERR", j
                        for c in j["choices"]:
                            text += c.get("text") or (c.get("delta") or {}).get("content") or ""
                            fin = c.get("finish_reason") or fin
            return 200, (text, fin)
        r = httpx.post(B + path, json=body, timeout=120)
        if r.status_code != 200: return r.status_code, r.text[:200]
        j = r.json()
        return 200, [(c.get("text") if "text" in c else c["message"].get("content"), c["finish_reason"]) for c in j["choices"]]
    except Exception as e:
        return "EXC", repr(e)[:200]
words = "alpha beta gamma delta The quick brown fox Paris Hello world def add numbers 1 2 3".split()
valid = []
for i in range(36):
    rng = random.Random(i); p = " ".join(rng.choice(words) for _ in range(rng.randrange(1, 30)))
    kind = i % 6
    if kind == 0: valid.append(("/v1/completions", {"prompt": p, "max_tokens": 24, "temperature": 0}, False))
    elif kind == 1: valid.append(("/v1/chat/completions", {"messages": [{"role": "user", "content": p}], "max_tokens": 24, "temperature": 0}, False))
    elif kind == 2: valid.append(("/v1/completions", {"prompt": p, "max_tokens": 24, "temperature": 0, "stream": True}, True))
    elif kind == 3: valid.append(("/v1/completions", {"prompt": p, "max_tokens": 24, "temperature": 0, "guided_regex": "[a-z ]{5,30}"}, False))
    elif kind == 4: valid.append(("/v1/chat/completions", {"messages": [{"role": "user", "content": p}], "max_tokens": 40, "temperature": 0, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}}, False))
    else: valid.append(("/v1/completions", {"prompt": p, "max_tokens": 24, "temperature": 0, "n": 2, "stop": ["consistency"], "logprobs": 2}, False))
invalid = [
 ("/v1/completions", {"prompt": "x", "max_tokens": 10**9}, False),
 ("/v1/completions", {"prompt": "x", "temperature": -1}, False),
 ("/v1/completions", {"prompt": "x", "logit_bias": {"99999": 1}}, False),
 ("/v1/completions", {"prompt": "x", "guided_regex": "("}, False),
 ("/v1/completions", {"prompt": "x", "guided_json": {"anyOf": [{"type": "object", "properties": {f"k{i}": {"const": i}}, "required": [f"k{i}"]} for i in range(2500)]}}, False),
 ("/v1/completions", {"prompt": "x", "guided_choice": ["a", "b"], "allowed_token_ids": [905]}, False),
 ("/v1/completions", {"prompt": "x", "unknown_field": 1}, False),
 ("/v1/completions", {"prompt": [10**9]}, False),
 ("/v1/completions", {"prompt": "x", "n": 1000}, False),
 ("/v1/completions", {"prompt": "x", "prompt_logprobs": 5, "stream": True}, False),
 ("/v1/chat/completions", {"messages": []}, False),
 ("/v1/chat/completions", {"messages": [{"role": "wizard", "content": "x"}]}, False),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f", "parameters": json.loads('{"type":"object","properties":{"x":' + '{"a":' * 600 + '1' + '}' * 600 + '}}')}}]}, False),
 ("/v1/completions", {"prompt": "x", "guided_regex": "[^\\s\\S]"}, False),
 ("/v1/completions", {"prompt": "x", "stop_token_ids": [49152]}, False),
 ("/v1/completions", {"prompt": "x", "allowed_token_ids": [118, 114], "max_tokens": 8}, True),
 ("/v1/completions", {"prompt": "x", "max_tokens": 8, "stream": True, "guided_json": {"anyOf": [{"type": "object", "properties": {f"q{i}": {"const": i}}, "required": [f"q{i}"]} for i in range(2500)]}}, True),
 ("/v1/completions", {"prompt": "x", "seed": 2**70}, False),
 ("/v1/completions", {"prompt": "x", "top_p": 0}, False),
 ("/v1/completions", {"prompt": "x", "bad_words": [""] * 3}, False),
 ("/v1/completions", {"prompt": "x" * 100000}, False),
 ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"}, False),
 ("/generate", {"prompt": "x", "max_new_tokens": -5}, False),
 ("/v1/completions", {"prompt": "x", "min_tokens": 100, "max_tokens": 5}, False),
]
solo = [post(*v) for v in valid]
print("solo statuses", sorted(set(s[0] for s in solo)))
jobs = [("V", i, v) for i, v in enumerate(valid)] + [("I", i, v) for i, v in enumerate(invalid)]
random.Random(1).shuffle(jobs)
res = {}
def go(j): res[(j[0], j[1])] = post(*j[2])
for rnd in range(2):
    res.clear()
    ths = [threading.Thread(target=go, args=(j,)) for j in jobs]
    t0 = time.monotonic()
    for t in ths: t.start()
    for t in ths: t.join(150)
    print(f"round {rnd}: {time.monotonic()-t0:.1f}s, {len(res)}/{len(jobs)} done")
    for i, v in enumerate(valid):
        if res.get(("V", i)) != solo[i]: print("  VALID MISMATCH", i, v[0], json.dumps(v[1])[:120], "\n    concurrent:", str(res.get(("V", i)))[:200], "\n    solo:", str(solo[i])[:200])
    for i, v in enumerate(invalid):
        r = res.get(("I", i)); print("  invalid", i, json.dumps(v[1])[:70], "->", str(r)[:150])
print("health", httpx.get(B + "/health").status_code)
