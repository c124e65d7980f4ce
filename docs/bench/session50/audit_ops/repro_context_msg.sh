#!/bin/bash
# F5: context overflow messages/codes: no "maximum context length" / context_length_exceeded; chat and completions differ (code null vs invalid_request, "of 64" vs "of 64 tokens").
# Server: ./start.sh 8874 x.log --max-model-len 64
B=http://127.0.0.1:${PORT:-8874}; H='Content-Type: application/json'; P=$(python3 -c "print(' '.join(['hello']*80))")
curl -s $B/v1/completions -H "$H" -d "{\"prompt\":\"$P\"}"; echo
curl -s $B/v1/chat/completions -H "$H" -d "{\"messages\":[{\"role\":\"user\",\"content\":\"$P\"}]}"; echo
curl -s $B/v1/chat/completions -H "$H" -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":100}'; echo
