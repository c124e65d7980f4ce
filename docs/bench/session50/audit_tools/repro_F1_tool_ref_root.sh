#!/bin/sh
# F1: a tool's parameters with "$ref": "#" (recursion to the root) is held to the *call* object's schema.
curl -s localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{
 "messages":[{"role":"user","content":"Make a tree of two nodes."}], "max_tokens":60, "temperature":0,
 "tool_choice":"required", "parallel_tool_calls":false,
 "tools":[{"type":"function","function":{"name":"mk","parameters":{"type":"object",
   "properties":{"v":{"type":"integer"},"child":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
   "required":["v","child"],"additionalProperties":false}}}]}' | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])'
# F1b: a valid "#/properties/..." pointer (or a $defs below the root, or a root "$id") is refused with a 400 that names "tools"
curl -s localhost:8850/v1/chat/completions -H 'content-type: application/json' -d '{
 "messages":[{"role":"user","content":"x"}], "max_tokens":20, "tool_choice":"required",
 "tools":[{"type":"function","function":{"name":"mk","parameters":{"type":"object",
   "properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}},"required":["a","b"]}}}]}' | cut -c1-300; echo
