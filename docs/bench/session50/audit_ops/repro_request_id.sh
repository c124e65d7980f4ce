#!/bin/bash
# F4: X-Request-Id is neither used as the request id (vLLM: _base_request_id) nor echoed back.
curl -s -i http://127.0.0.1:${PORT:-8874}/v1/chat/completions -H 'Content-Type: application/json' -H 'X-Request-Id: my-req-42' \
  -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3}' | grep -i 'x-request-id\|"id"' || echo "(no X-Request-Id header)"
