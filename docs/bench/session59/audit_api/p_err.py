from h import *
s,ch = stream("/v1/completions", {"prompt":"Name:","guided_regex":"name","bad_words":["name"],"max_tokens":5,"stream_options":{"include_usage":True}}); show("stream midrun fail", [s, ch])
s,ch = stream("/v1/completions", {"prompt":"Name:","logit_bias":{"abc":1},"max_tokens":5}); show("stream bad bias", [s, ch])
s,ch = stream("/v1/chat/completions", {"messages":[{"role":"user","content":"hi"}],"guided_regex":"name","bad_words":["name"],"max_tokens":5,"n":2}); show("chat stream midrun fail n2", [s, ch])
