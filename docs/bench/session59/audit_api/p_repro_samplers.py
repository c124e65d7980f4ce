# llama.cpp `samplers` on /v1: an explicit sampler value the list leaves out is neutralised with a 200
from h import *
P = "The capital of France is"
for b in [
  {"prompt":P,"max_tokens":8,"temperature":0},                                   # greedy
  {"prompt":P,"max_tokens":8,"temperature":0,"samplers":["top_k"],"seed":1},    # temperature 0 dropped -> T=1 sample
  {"prompt":P,"max_tokens":8,"temperature":0,"samplers":["top_k"],"seed":2},
  {"prompt":P,"max_tokens":8,"temperature":1,"top_k":1,"samplers":["temperature"],"seed":2},  # top_k 1 dropped
  {"prompt":P,"max_tokens":8,"temperature":1,"seed":2},                          # same as the line above
  {"prompt":"Hi","samplers":["infill"],"max_tokens":5,"top_k":50},                # 400 says top_k must be in [1,1000] (50 is)
]:
    s,j = comp(dict(b))
    print(json.dumps({k:v for k,v in b.items() if k!="prompt"}), "->", s, [c["text"] for c in j["choices"]] if s==200 else j["error"]["message"][:140])
