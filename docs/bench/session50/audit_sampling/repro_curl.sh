#!/bin/sh
# Reproducers for REPORT.md (server on 127.0.0.1:8860). Each prints the HTTP status and body head.
U=http://127.0.0.1:8860
J='Content-Type: application/json'
echo "F2 echo + max_tokens 0 (vLLM/legacy OpenAI: 200 with the prompt only):"
curl -s -w ' [%{http_code}]\n' $U/v1/completions -H "$J" -d '{"prompt":"The capital of France is","echo":true,"logprobs":1,"max_tokens":0}'
echo "F3 duplicate key: the first \"stop\" is silently dropped (first call: 3 tokens, text contains \"-\"; second, stop honoured):"
curl -s -w ' [%{http_code}]\n' $U/v1/completions -H "$J" -d '{"prompt":"Hi","max_tokens":3,"temperature":0,"stop":["-"],"stop":null}' | head -c 300; echo
curl -s -w ' [%{http_code}]\n' $U/v1/completions -H "$J" -d '{"prompt":"Hi","max_tokens":3,"temperature":0,"stop":["-"]}' | head -c 300; echo
echo "F4 temperature above 2 (OpenAI: 400; here 200):"
curl -s -w ' [%{http_code}]\n' $U/v1/chat/completions -H "$J" -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"temperature":100}' | head -c 200; echo
echo "F5 tool_choice / parallel_tool_calls without tools (OpenAI: 400 'only allowed when tools are specified'; here 200):"
curl -s -w ' [%{http_code}]\n' $U/v1/chat/completions -H "$J" -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"tool_choice":"none","parallel_tool_calls":false}' | head -c 200; echo
echo "F6 chat_template_kwargs enable_thinking (vLLM: ignored by templates that do not read it; here 400):"
curl -s -w ' [%{http_code}]\n' $U/v1/chat/completions -H "$J" -d '{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"chat_template_kwargs":{"enable_thinking":false}}'
