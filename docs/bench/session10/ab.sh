#!/usr/bin/env bash
# Issue 19, served: 32 streams at temperature 1, alternated rounds of
#   base  (2b0483e, the session's start, a worktree at $BASE) plain sampling,
#   new   (this tree) plain sampling, and
#   new   with frequency_penalty 0.5, presence_penalty 0.5, min_p 0.05 and top-5 logprobs.
# Same client (this tree's `roseinfer bench serve`) for all; one server per tree and round.
set -u
NEW=$(cd "$(dirname "$0")/../../.." && pwd)
BASE=${BASE:-/tmp/base19}
PY=$NEW/.venv/bin/python
OUT=${OUT:-/tmp/ab19}; mkdir -p "$OUT"
PORT=${PORT:-8792}
ROUNDS=${ROUNDS:-3}
FEATURES='{"frequency_penalty": 0.5, "presence_penalty": 0.5, "min_p": 0.05, "logprobs": 5}'
bench() {  # label extra-body pid
  (cd "$NEW" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 \
    --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 64 \
    --temperature 1.0 --no-progress --server-pid "$3" --extra-body "$2" \
    --json "$OUT/$1.json" > "$OUT/$1.txt" 2>&1)
  echo "$1: $(grep 'Output token throughput' "$OUT/$1.txt" | awk '{print $NF}') tok/s"
}
serve() {  # tree label round, then the benches
  local tree=$1 label=$2 round=$3
  cd "$tree"
  PYTHONPATH=$tree $PY -m roseinfer.server --model smollm2 --port $PORT --log-level warning > "$OUT/server_${label}_$round.log" 2>&1 &
  local pid=$!
  cd /
  for i in $(seq 1 180); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  bench "${label}_plain_$round" '{}' $pid
  if [ "$label" = new ]; then bench "${label}_features_$round" "$FEATURES" $pid; fi
  kill $pid; wait $pid 2>/dev/null
  for i in $(seq 1 30); do curl -sf http://127.0.0.1:$PORT/health >/dev/null || break; sleep 1; done
}
date -u +"start %FT%TZ"
for round in $(seq 1 "$ROUNDS"); do
  serve "$BASE" base "$round"
  serve "$NEW" new "$round"
done
date -u +"end %FT%TZ"
