#!/usr/bin/env bash
# Issue 19's overhead figure: 32 streams, plain sampling vs every request with
# frequency_penalty, presence_penalty, min_p and top-5 logprobs; one server, alternated runs.
# LABEL and BODY name and set the other workload's extra request fields (structured_ab.sh).
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$ROOT/.venv/bin/python
OUT=${OUT:-/tmp/sampling_ab}; mkdir -p "$OUT"
PORT=${PORT:-8791}
ROUNDS=${ROUNDS:-3}
cd "$ROOT"
$PY -m roseinfer.server --model smollm2 --port $PORT --log-level warning > "$OUT/server.log" 2>&1 &
pid=$!
for i in $(seq 1 180); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
FEATURES=${BODY:-'{"frequency_penalty": 0.5, "presence_penalty": 0.5, "min_p": 0.05, "logprobs": 5}'}
LABEL=${LABEL:-features}
run() {  # label round extra-body
  $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --random-input-len 70 \
    --random-output-len 128 --concurrency 32 --num-prompts 64 --temperature 1.0 --no-progress \
    --server-pid $pid --extra-body "$3" --json "$OUT/$1_$2.json" > "$OUT/$1_$2.txt" 2>&1
  echo "$1 $2: $(grep 'Output token throughput' "$OUT/$1_$2.txt" | awk '{print $NF}') tok/s, $(grep 'Total generated tokens' "$OUT/$1_$2.txt" | awk '{print $NF}') tokens"
}
date -u +"start %FT%TZ"
run warmup 0 '{}' > /dev/null  # the first run after a start is slower: unmeasured
for round in $(seq 1 "$ROUNDS"); do  # the order alternates too
  if [ $((round % 2)) = 1 ]; then
    run plain "$round" '{}'; run "$LABEL" "$round" "$FEATURES"
  else
    run "$LABEL" "$round" "$FEATURES"; run plain "$round" '{}'
  fi
done
date -u +"end %FT%TZ"
kill $pid; wait $pid 2>/dev/null
