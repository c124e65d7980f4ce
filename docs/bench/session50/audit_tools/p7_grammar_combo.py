from h import *
import jsonschema
U = [{"role": "user", "content": "Give me a JSON example of a person."}]
SCH = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}}, "required": ["name", "age"], "additionalProperties": False}
RF = {"type": "json_schema", "json_schema": {"name": "p", "schema": SCH, "strict": True}}
def run(label, extra, check=True):
    b = {"messages": U, "max_tokens": 40, "response_format": RF, **extra}
    s, j = post(b)
    if s != 200: print(label, s, j); return None
    for c in j["choices"]:
        t = c["message"]["content"]
        try: jsonschema.validate(json.loads(t), SCH); v = "VALID"
        except Exception as e: v = "INVALID " + type(e).__name__
        print(f"{label}[{c['index']}] fr={c['finish_reason']} {v} {t!r}")
    return j
run("plain", {})
j = run("n=3 T=1 seed", {"n": 3, "temperature": 1.0, "seed": 3})
s, ch = stream({"messages": U, "max_tokens": 40, "response_format": RF, "n": 3, "temperature": 1.0, "seed": 3})
texts = {}
for c in ch:
    for x in c["choices"]:
        texts[x["index"]] = texts.get(x["index"], "") + (x["delta"].get("content") or "")
print("stream n=3 same as nonstream:", [texts.get(i) == j["choices"][i]["message"]["content"] for i in range(3)])
run("stop ','", {"stop": [","]})
run("stop '\"age\"' ", {"stop": ["\"age\""]})
run("max_tokens 5", {"max_tokens": 5})
run("min_tokens 30", {"min_tokens": 30})
run("ignore_eos", {"ignore_eos": True})
run("stop_token_ids", {"stop_token_ids": [1002]})
j = run("logprobs", {"logprobs": True, "top_logprobs": 3})
if j:
    lp = j["choices"][0]["logprobs"]["content"]
    print("  lp tokens:", [x["token"] for x in lp])
    print("  first tops:", [(t["token"], round(t["logprob"], 2)) for t in lp[0]["top_logprobs"]])
run("logit_bias ban '{\"'", {"logit_bias": {"39428": -100}})
run("allowed_token_ids tiny", {"allowed_token_ids": [39428, 1245]})
run("bad_words name", {"bad_words": ["name"]})
