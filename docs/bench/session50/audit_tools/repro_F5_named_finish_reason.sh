#!/bin/sh
# F5: a named tool_choice finishes "tool_calls"; OpenAI and vLLM (PR #49496) answer "stop"
curl -s localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{
 "messages":[{"role":"user","content":"Weather in Paris?"}], "temperature":0, "max_tokens":40,
 "tool_choice":{"type":"function","function":{"name":"get_weather"}},
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}' \
 | python3 -c 'import json,sys; c=json.load(sys.stdin)["choices"][0]; print(c["finish_reason"])'
