#!/bin/sh
# /v1/embeddings basics: shapes, base64 layout, usage, token-array inputs, dimensions
U=${U:-http://127.0.0.1:18201}
post() { echo "== $1"; curl -s -m 60 $U/v1/embeddings -H 'Content-Type: application/json' -d "$1" | python3 -c 'import sys,json; d=json.load(sys.stdin); 
if "data" in d:
  for x in d["data"]: e=x["embedding"]; x["embedding"]=(e[:3],len(e)) if isinstance(e,list) else (e[:16],len(e))
print(json.dumps(d)[:700])'; }
post '{"input":"hello world"}'
post '{"input":["hello world","bye"],"encoding_format":"base64"}'
post '{"input":[[1,2,3],[4,5]]}'
post '{"input":[1,2,3]}'
post '{"input":"hello","dimensions":64}'
post '{"input":"hello","dimensions":576}'
post '{"input":"hello","user":"u1"}'
post '{"input":"hello","encoding_format":"bytes"}'
post '{"input":""}'
post '{"input":[]}'
post '{"input":"hello world foo bar","truncate_prompt_tokens":2}'
post '{"input":"hello","add_special_tokens":false}'
