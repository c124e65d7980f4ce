U=http://127.0.0.1:18101/v1/responses
probe() { echo "== $1"; curl -s -o /tmp/s58/pf.json -w "%{http_code} " $U$2 -H 'content-type: application/json' -d "$1"; /work/main/.venv/bin/python -c "import json;d=json.load(open('/tmp/s58/pf.json'));print(d.get('error') or {k:d.get(k) for k in ('status','service_tier','input_tokens')})" | cut -c1-300; }
probe '{"input":"hi","max_output_tokens":2,"service_tier":"bogus"}'
probe '{"input":"hi","max_output_tokens":2,"prompt_cache_retention":"bogus"}'
probe '{"input":"hi","max_output_tokens":2,"prompt_cache_key":5}'
probe '{"input":"hi","max_output_tokens":0}'
probe '{"input":"hi","text":{"format":{"type":"json_object"}}}' /input_tokens
probe '{"input":"hi","reasoning":{"effort":"low"}}' /input_tokens
probe '{"input":"hi","truncation":"auto","parallel_tool_calls":true}' /input_tokens
