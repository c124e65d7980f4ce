#!/bin/sh
# F2: llama.cpp GBNF \uXXXX / \UXXXXXXXX escapes with leading zeros are refused (400 "lexer error")
curl -s -w ' [%{http_code}]\n' localhost:8850/v1/chat/completions -H 'content-type: application/json' \
 -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":4,"grammar":"root ::= \"caf\" \"\\u00e9\""}' | cut -c1-120
curl -s -w ' [%{http_code}]\n' localhost:8850/v1/chat/completions -H 'content-type: application/json' \
 -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":4,"grammar":"root ::= [\\u00e0-\\u00ff]{3}"}' | cut -c1-120
curl -s -w ' [%{http_code}]\n' localhost:8850/v1/chat/completions -H 'content-type: application/json' \
 -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":4,"grammar":"root ::= \"\\U0001F600\""}' | cut -c1-120
# the converter's output: \u00e9 -> \ue9 (llguidance.gbnf_to_lark strips the leading zeros)
cd /tmp/s50/wt && PYTHONPATH=/tmp/s50/wt /work/main/.venv/bin/python -c 'from roseinfer.structured.gbnf import gbnf_to_lark as f; print(repr(f("root ::= \"\\u00e9\" [\\u00e0-\\u00ff]").splitlines()[2]))'
