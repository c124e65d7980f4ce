from h import *
U = [{"role": "user", "content": "Say a word."}]
for label, extra in [("regex name lb-100 on 'name'", {"guided_regex": "name", "logit_bias": {"1245": -100}}),
                     ("regex name allowed n,ame", {"guided_regex": "name", "allowed_token_ids": [83, 552, 1245]}),
                     ("regex name+x bad name", {"guided_regex": "namex", "bad_words": ["name"]}),
                     ("regex 'name|other' bad name", {"guided_regex": "(name|other)", "bad_words": ["name"]}),
                    ]:
    s, j = post({"messages": U, "max_tokens": 10, "logprobs": True, **extra})
    if s != 200: print(label, s, j["error"]); continue
    c = j["choices"][0]
    print(label, c["finish_reason"], repr(c["message"]["content"]), [x["token"] for x in c["logprobs"]["content"]])
