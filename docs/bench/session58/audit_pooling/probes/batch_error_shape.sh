#!/bin/sh
# run-batch: a refused line (4xx) puts the error body in response.body and error:null (OpenAI's
# convention); vLLM's run_batch writes response:{status_code:4xx, body:null} and error:<ErrorResponse>.
# /v1/score and /v1/rerank lines (vLLM's run_batch takes */score and */rerank) get invalid_url.
cd "$(dirname "$0")/.." || exit 1
cat > /tmp/s58/batch_err_in.jsonl <<'L'
{"custom_id":"bad","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"bogus_field":1}}
{"custom_id":"score","method":"POST","url":"/v1/score","body":{"text_1":"a","text_2":["a","b"]}}
{"custom_id":"rerank","method":"POST","url":"/rerank","body":{"query":"a","documents":["a","b"]}}
L
PYTHONPATH=. timeout 600 /work/main/.venv/bin/python -m roseinfer.cli run-batch -i /tmp/s58/batch_err_in.jsonl -o /tmp/s58/batch_err_out.jsonl --dtype float32 2>&1 | tail -1
cut -c1-400 /tmp/s58/batch_err_out.jsonl
