from h import *
U = [{"role": "user", "content": "Give me a JSON example of a person."}]
SCH = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer"}}, "required": ["name", "age"], "additionalProperties": False}
RF = {"type": "json_schema", "json_schema": {"name": "p", "schema": SCH}}
for label, extra in [
  ("lb ban {\"", {"response_format": RF, "logit_bias": {"39428": -100}}),
  ("choice+bad", {"guided_choice": ["name", "other"], "bad_words": ["name"]}),
  ("choice only name + bad", {"guided_choice": ["name"], "bad_words": ["name"]}),
  ("regex name + bad", {"guided_regex": "name", "bad_words": ["name"]}),
  ("rf + bad_words John", {"response_format": RF, "bad_words": ["John"]}),
  ("rf + bad_words name", {"response_format": RF, "bad_words": ["name"]}),
  ("no grammar bad_words name", {"bad_words": ["name"]}),
]:
    s, j = post({"messages": U, "max_tokens": 30, "logprobs": True, **extra})
    if s != 200: print(label, s, j["error"]["message"][:200], j["error"]["param"]); continue
    c = j["choices"][0]
    print(label, c["finish_reason"], repr(c["message"]["content"]), [x["token"] for x in c["logprobs"]["content"]][:12])
