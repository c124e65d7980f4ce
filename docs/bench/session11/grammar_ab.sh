#!/usr/bin/env bash
# Issue 20's served figures, session 11 (the bitmask applied by the C++ kernel): 32 streams of
# SmolLM2 on one server, alternated in each round:
#   completions plain vs every request under a JSON schema (response_format json_schema);
#   chat with two tools and tool_choice "none" (no grammar) vs "auto" (the lazy <tool_call>
#   grammar over free text): the same prompts, so the difference is the grammar's cost.
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$ROOT/.venv/bin/python
OUT=${OUT:-/tmp/grammar_ab}; mkdir -p "$OUT"
PORT=${PORT:-8794}
ROUNDS=${ROUNDS:-2}
NUM_PROMPTS=${NUM_PROMPTS:-64}
OUTPUT_LEN=${OUTPUT_LEN:-128}
cd "$ROOT"
$PY -m roseinfer.server --model smollm2 --port $PORT --log-level warning > "$OUT/server.log" 2>&1 &
pid=$!
for i in $(seq 1 180); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
SCHEMA='{"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object", "properties": {"answer": {"type": "string"}, "sources": {"type": "array", "items": {"type": "string"}}, "confidence": {"type": "number"}}, "required": ["answer", "sources", "confidence"], "additionalProperties": false}}}}'
TOOLS='"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}}]'
run() {  # label round endpoint-type extra-body
  $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --random-input-len 70 \
    --random-output-len $OUTPUT_LEN --concurrency 32 --num-prompts $NUM_PROMPTS --temperature 1.0 --no-progress \
    --endpoint-type "$3" --server-pid $pid --extra-body "$4" --json "$OUT/$1_$2.json" > "$OUT/$1_$2.txt" 2>&1
  echo "$1 $2: $(grep 'Output token throughput' "$OUT/$1_$2.txt" | awk '{print $NF}') tok/s, $(grep 'Total generated tokens' "$OUT/$1_$2.txt" | awk '{print $NF}') tokens"
}
date -u +"start %FT%TZ"
run warmup 0 completions '{}' > /dev/null  # the first run after a start is slower: unmeasured
for round in $(seq 1 "$ROUNDS"); do  # the order alternates too
  if [ $((round % 2)) = 1 ]; then
    run plain "$round" completions '{}'; run schema "$round" completions "$SCHEMA"
    run tools_none "$round" chat "{$TOOLS, \"tool_choice\": \"none\"}"; run tools_auto "$round" chat "{$TOOLS}"
  else
    run schema "$round" completions "$SCHEMA"; run plain "$round" completions '{}'
    run tools_auto "$round" chat "{$TOOLS}"; run tools_none "$round" chat "{$TOOLS, \"tool_choice\": \"none\"}"
  fi
done
date -u +"end %FT%TZ"
kill $pid; wait $pid 2>/dev/null
