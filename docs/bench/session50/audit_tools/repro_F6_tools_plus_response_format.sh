#!/bin/sh
# F6: tools (auto) + response_format is a 400; OpenAI takes both (README does not say it is refused)
curl -s -w ' [%{http_code}]\n' localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{
 "messages":[{"role":"user","content":"Weather in Paris?"}], "max_tokens":20,
 "response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}},
 "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}'
