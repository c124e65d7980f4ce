#!/bin/bash
# Minor: unknown routes answer {"message":"Not Found"} (OpenAI: "Invalid URL (POST /v1/embeddings)"); /v1/* unknown paths bypass --api-key (404, vLLM: 401).
curl -s -X POST http://127.0.0.1:${PORT:-8874}/v1/embeddings -H 'Content-Type: application/json' -d '{"input":"hi"}'; echo
