U=http://127.0.0.1:18101/v1/responses
probe() { echo "== $1"; curl -s -o /tmp/s58/pf.json -w "%{http_code} " $U -H 'content-type: application/json' -d "$1"; /work/main/.venv/bin/python -c "import json;d=json.load(open('/tmp/s58/pf.json'));print(d.get('error') or {k:d.get(k) for k in ('status','text','tool_choice','output')})" | cut -c1-400; }
T='"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}]'
probe '{"input":"hi","max_output_tokens":2,"text":{"format":{"type":"text","foo":1}}}'
probe "{\"input\":\"hi\",\"max_output_tokens\":2,$T,\"tool_choice\":{\"type\":\"function\",\"name\":\"f\",\"foo\":1}}"
probe '{"input":"hi","max_output_tokens":2,"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"defer_loading":true}]}'
probe '{"input":"hi","max_output_tokens":2,"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{}, "additionalProperties":false},"output_schema":{"type":"object"}}]}'
probe '{"input":[{"role":"user","content":[{"type":"input_text","text":"hi","cache_control":1}]}],"max_output_tokens":2}'
probe '{"input":[{"type":"item_reference","id":"msg_1"}],"max_output_tokens":2}'
probe '{"input":[{"role":"assistant","content":[{"type":"input_text","text":"hello"}]},{"role":"user","content":"hi"}],"max_output_tokens":2}'
probe '{"input":[{"role":"user","content":"hi"}],"max_output_tokens":2,"tool_choice":"none"}'
probe "{\"input\":\"call f\",\"max_output_tokens\":30,$T,\"tool_choice\":\"none\",\"temperature\":0}"
probe '{"input":[{"type":"function_call_output","call_id":"c1","output":"x"}],"max_output_tokens":2}'
probe '{"input":"hi","max_output_tokens":2,"metadata":null}'
probe '{"input":"hi","max_output_tokens":2,"instructions":null}'
probe '{"input":"hi","max_output_tokens":2,"conversation":null,"previous_response_id":null}'
probe '{"input":"hi","max_output_tokens":2,"text":{"format":{"type":"json_schema","name":"x","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}}}}'
