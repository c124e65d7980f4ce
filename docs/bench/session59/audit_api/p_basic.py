from h import *
# echo-only
for b in [
  {"echo":True,"max_tokens":0},
  {"echo":True,"max_tokens":0,"logprobs":2,"n":2},
  {"echo":True,"max_tokens":0,"prompt":["Hi there","Bye"],"logprobs":0},
  {"echo":False,"max_tokens":0},
  {"echo":True,"max_completion_tokens":0},
  {"echo":True,"n_predict":0},
  {"echo":True,"max_tokens":0,"stop":["e"]},
  {"echo":True,"max_tokens":0,"prompt_logprobs":1},
  {"echo":True,"max_tokens":0,"best_of":2,"n":2},
  {"suffix":"abc"},
  {"suffix":""},
]:
    show(str(b), comp(dict(b)))
s, ch = stream("/v1/completions", {"prompt":"Hello world","echo":True,"max_tokens":0,"logprobs":1,"n":2,"stream_options":{"include_usage":True}})
show("stream echo-only", ch)
