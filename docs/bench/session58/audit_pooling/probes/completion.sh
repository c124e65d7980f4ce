#!/bin/sh
# llama.cpp /completion response fields
U=${U:-http://127.0.0.1:18201}
p() { echo "== $1 $2"; curl -s -m 60 $U$1 -H 'Content-Type: application/json' -d "$2" | python3 -c 'import sys,json; d=json.load(sys.stdin); 
if isinstance(d,dict) and "generation_settings" in d: d["generation_settings"]=sorted(d["generation_settings"])
print(json.dumps(d)[:1800])'; }
p /completion '{"prompt":"The capital of France is","n_predict":4,"temperature":0}'
p /completion '{"prompt":"The capital of France is","n_predict":2,"temperature":0,"n_probs":2}'
p /completion '{"prompt":"The capital of France is","n_predict":8,"temperature":0,"stop":[" Paris"]}'
