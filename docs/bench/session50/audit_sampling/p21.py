from h import *
CH="/v1/chat/completions"; CO="/v1/completions"
b={"prompt":"Answer yes or no:","max_tokens":5,"temperature":0}
M=[{"role":"user","content":"Hi"}]
for kv in [{"guided_choice":[]},{"guided_choice":["yes","no"]},{"guided_choice":[""]},{"guided_regex":""},{"guided_regex":"("},{"guided_regex":"[a-z]{3}"},{"guided_json":"not json"},{"guided_json":{"type":"bogus"}},{"guided_json":{}},{"guided_json":{"$ref":"#"}},{"grammar":""},{"grammar":"root ::= \"a\""},{"grammar":"nonsense ::="},{"json_schema":{}},{"guided_grammar":"start: \"x\""},{"structured_outputs":{}},{"structured_outputs":{"regex":"a","choice":["a"]}},{"structured_outputs":{"json_object":False}},{"guided_choice":["yes"],"guided_regex":"a"},{"guided_decoding_backend":"xgrammar","guided_choice":["yes","no"]},{"guided_whitespace_pattern":" "},{"logit_bias":{"1"*5000:1}},{"stop":"x"*16385},{"stop":" "},{"bad_words":["x"*101]},{"allowed_token_ids":[2]},{"allowed_token_ids":[2],"ignore_eos":True},{"allowed_token_ids":[2],"min_tokens":2},{"logit_bias":{"2":100},"ignore_eos":True},{"guided_choice":["yes","no"],"min_tokens":4},{"guided_choice":["yes","no"],"allowed_token_ids":[30]},{"guided_regex":"a+","max_tokens":3,"ignore_eos":True},{"guided_choice":["yes","no"],"stop":"y"},{"prompt":[[1,2],[3]],"n":2,"echo":True,"logprobs":1}]:
    show(str(kv)[:70], post(CO,{**b,**kv}))
show("chat prompt_logprobs n2", post(CH,{"messages":M,"max_tokens":2,"n":2,"prompt_logprobs":0}))
show("chat long", post(CH,{"messages":[{"role":"user","content":"hello "*9000}],"max_tokens":2}))
show("chat long truncate", post(CH,{"messages":[{"role":"user","content":"hello "*9000}],"max_tokens":2,"truncate_prompt_tokens":100}))
show("co long truncate -1", post(CO,{"prompt":"hello "*9000,"max_tokens":2,"truncate_prompt_tokens":-1}))
show("co long trunc 8192 + max 2", post(CO,{"prompt":"hello "*9000,"max_tokens":2,"truncate_prompt_tokens":8192}))
show("ctk nested", post(CH,{"messages":M,"max_tokens":2,"chat_template_kwargs":{"x":{"a":[1]}}}))
show("ctk not dict", post(CH,{"messages":M,"max_tokens":2,"chat_template_kwargs":[1]}))
