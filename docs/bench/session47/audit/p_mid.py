import json, time, threading, httpx, sys
B = "http://127.0.0.1:18101"
PROMPTS = ["Hello", "The quick brown fox", "def add(a, b):", "Paris is the capital of", "Numbers: 1 2 3", "Once upon a time"]
def valid(p): return {"prompt": p, "max_tokens": 24, "temperature": 0}
def run(body, path="/v1/completions", timeout=60):
    try:
        r = httpx.post(B + path, json=body, timeout=timeout)
        return r.status_code, (r.json()["choices"][0]["text"] if r.status_code == 200 and "choices" in r.json() and "text" in r.json()["choices"][0] else r.text[:250])
    except Exception as e:
        return "EXC", repr(e)[:200]
solo = {p: run(valid(p)) for p in PROMPTS}
cont = [118, 114, 136, 240, 225, 224, 129, 130, 131, 221]
BAD = {
 "choice_allowed_conflict": {"prompt": "Hi", "max_tokens": 8, "guided_choice": ["hello world"], "allowed_token_ids": [905]},
 "grammar_bad_words_conflict": {"prompt": "Hi", "max_tokens": 8, "guided_choice": ["hello"], "bad_words": ["hello", "h", "he", "hel", "hell"]},
 "schema_min_gt_max_len": {"prompt": "Hi", "max_tokens": 8, "guided_json": {"type": "string", "minLength": 5, "maxLength": 2}},
 "schema_min_gt_max_int": {"prompt": "Hi", "max_tokens": 8, "guided_json": {"type": "integer", "minimum": 5, "maximum": 2}},
 "schema_enum_empty": {"prompt": "Hi", "max_tokens": 8, "guided_json": {"enum": []}},
 "schema_not_any": {"prompt": "Hi", "max_tokens": 8, "guided_json": {"not": {}}},
 "regex_empty_class": {"prompt": "Hi", "max_tokens": 8, "guided_regex": "[^\\s\\S]"},
 "schema_anyof_3000": {"prompt": "Hi", "max_tokens": 8, "guided_json": {"anyOf": [{"type": "object", "properties": {f"k{i}": {"const": i}}, "required": [f"k{i}"]} for i in range(3000)]}},
 "invalid_utf8_bytes": {"prompt": "Hi", "max_tokens": 16, "allowed_token_ids": cont, "temperature": 0},
 "invalid_utf8_logprobs": {"prompt": "Hi", "max_tokens": 16, "allowed_token_ids": cont, "logprobs": 5, "echo": True},
 "invalid_utf8_stop": {"prompt": "Hi", "max_tokens": 16, "allowed_token_ids": cont, "stop": ["\ufffd", "\ufffd\ufffd"]},
 "lead_bytes_stop": {"prompt": "Hi", "max_tokens": 16, "allowed_token_ids": [188, 187, 189] + cont, "stop": ["\U0001F600"], "temperature": 1.5, "seed": 3},
 "stop_in_prompt_echo": {"prompt": "Hello world", "echo": True, "max_tokens": 8, "stop": ["world", "Hello"]},
 "stop_long_overlap": {"prompt": "Hi", "max_tokens": 30, "stop": ["consistency consistency consistency"]},
 "stop_token_special_min": {"prompt": "Hi", "max_tokens": 8, "min_tokens": 8, "stop_token_ids": [0, 1, 2], "allowed_token_ids": [0, 1, 2, 905]},
 "prompt_logprobs_utf8": {"prompt": [188, 118, 118, 118, 188], "max_tokens": 2, "prompt_logprobs": 5},
}
names = sys.argv[1:] or list(BAD)
for name in names:
    res = {}
    def go(key, body): res[key] = run(body)
    ths = [threading.Thread(target=go, args=(p, valid(p))) for p in PROMPTS] + [threading.Thread(target=go, args=("BAD", BAD[name]))]
    for t in ths: t.start()
    for t in ths: t.join(90)
    wrong = [p for p in PROMPTS if res.get(p) != solo[p]]
    h = httpx.get(B + "/health", timeout=10).status_code
    print(f"== {name}: bad -> {res.get('BAD')}\n   valid mismatches: {[(p, res.get(p), solo[p]) for p in wrong]} health={h}", flush=True)
