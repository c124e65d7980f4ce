#!/usr/bin/env bash
# Issue 20's throughput check: 32 streams, every request under a JSON schema
# (response_format json_schema) against the same workload unconstrained; one server,
# alternated runs (order alternating too). Output tokens per second from `roseinfer bench serve`.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$ROOT/.venv/bin/python
OUT=${OUT:-/tmp/structured_ab}; mkdir -p "$OUT"
PORT=${PORT:-8793}
ROUNDS=${ROUNDS:-2}
cd "$ROOT"
$PY -m roseinfer.server --model smollm2 --port $PORT --log-level warning > "$OUT/server.log" 2>&1 &
pid=$!
for i in $(seq 1 180); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
SCHEMA='{"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object", "properties": {"answer": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}}, "confidence": {"type": "number"}}, "required": ["answer", "sources", "confidence"], "additionalProperties": false}}}}'
run() {  # label round extra-body
  $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --random-input-len 70 \
    --random-output-len 128 --concurrency 32 --num-prompts 64 --temperature 1.0 --no-progress \
    --server-pid $pid --extra-body "$3" --json "$OUT/$1_$2.json" > "$OUT/$1_$2.txt" 2>&1
  echo "$1 $2: $(grep 'Output token throughput' "$OUT/$1_$2.txt" | awk '{print $NF}') tok/s, $(grep 'Total generated tokens' "$OUT/$1_$2.txt" | awk '{print $NF}') tokens"
}
date -u +"start %FT%TZ"
run warmup 0 "$SCHEMA" > /dev/null
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then run plain "$round" '{}'; run schema "$round" "$SCHEMA"
  else run schema "$round" "$SCHEMA"; run plain "$round" '{}'; fi
done
date -u +"end %FT%TZ"
kill $pid; wait $pid 2>/dev/null
