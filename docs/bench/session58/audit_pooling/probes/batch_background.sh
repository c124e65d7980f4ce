#!/bin/sh
# run-batch: a /v1/responses line with background:true is "answered" (200) with status "queued",
# output [] -- the generated text is never written, and the run exits 0 counting it as answered.
cd "$(dirname "$0")/.." || exit 1
printf '%s\n' '{"custom_id":"bg","method":"POST","url":"/v1/responses","body":{"input":"Hi","max_output_tokens":3,"temperature":0,"background":true}}' > /tmp/s58/batch_bg_in.jsonl
PYTHONPATH=. timeout 600 /work/main/.venv/bin/python -m roseinfer.cli run-batch -i /tmp/s58/batch_bg_in.jsonl -o /tmp/s58/batch_bg_out.jsonl --dtype float32 2>&1 | tail -1
echo "exit: $?"
python3 -c 'import json; d=json.loads(open("/tmp/s58/batch_bg_out.jsonl").read()); b=d["response"]["body"]; print(d["response"]["status_code"], b["status"], b["output"])'
