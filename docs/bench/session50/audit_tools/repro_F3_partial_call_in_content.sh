#!/bin/sh
# F3: under tool_choice "required", a call cut before its header completes lands in `content` as raw markup
for extra in '"max_tokens":40' '"max_tokens":6,"parallel_tool_calls":false' '"stop":["get_weather"],"parallel_tool_calls":false'; do
curl -s localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{
 "messages":[{"role":"user","content":"What'"'"'s the weather in Paris?"}], "temperature":0, '"$extra"', "tool_choice":"required",
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}' \
 | python3 -c 'import json,sys; c=json.load(sys.stdin)["choices"][0]; print(c["finish_reason"], repr(c["message"]["content"]), c["message"].get("tool_calls"))'; done
