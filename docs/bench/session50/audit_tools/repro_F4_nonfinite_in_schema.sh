#!/bin/sh
# F4: a schema with an out-of-range number (1e400 -> inf) or NaN constrains to `null`: the output breaks the schema, 200
for sch in '{"const": 1e400}' '{"enum": [NaN]}'; do
curl -s localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{"messages":[{"role":"user","content":"num"}],"max_tokens":8,"temperature":0,
 "response_format":{"type":"json_schema","json_schema":{"name":"x","schema":'"$sch"'}}}' \
 | python3 -c 'import json,sys; c=json.load(sys.stdin)["choices"][0]; print(c["finish_reason"], repr(c["message"]["content"]))'; done
