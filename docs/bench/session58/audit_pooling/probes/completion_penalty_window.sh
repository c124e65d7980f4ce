#!/bin/sh
# /completion: llama.cpp's penalties read the last repeat_last_n (default 64; -1 = whole context) tokens
# of prompt AND output (server.cpp replays the prompt into the sampler: common_sampler_accept(..., false)).
# Here frequency/presence penalties read generated tokens only: a prompt token is never penalized,
# even with repeat_last_n -1, which the field table accepts as "the whole context".
U=${U:-http://127.0.0.1:18201}
P='"prompt":"red blue red blue red blue red blue red","n_predict":1,"temperature":0'
for extra in '' ',"frequency_penalty":2' ',"frequency_penalty":2,"repeat_last_n":-1' ',"presence_penalty":2,"repeat_last_n":-1' ',"repeat_penalty":2'; do
  printf '%-45s ' "${extra:-(none)}"
  curl -s -m 60 $U/completion -H 'Content-Type: application/json' -d "{$P$extra}" | python3 -c 'import sys,json; print(repr(json.load(sys.stdin).get("content")))'
done
