#!/usr/bin/env bash
# Served and offline A/B, alternated: BASE (a worktree of the commit before) against this tree,
# the same load client (this tree's): the default dtype, one stream and 32, and offline throughput;
# then this tree alone with --quantization int8 (the base's scalar int8 path on an AVX2 host would
# take 2 s a step at 32 streams).
#   BASE=/work/wt-base OUT=/tmp/serve_ab [ROUNDS=2] docs/bench/session12/serve_ab.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$HERE/.venv/bin/python
OUT=${OUT:-/tmp/serve_ab}; mkdir -p "$OUT"
PORT=8791
serve_point() {  # tree label round mode-flags...
  local tree=$1 label=$2 round=$3; shift 3
  (cd "$tree" && PYTHONPATH=$tree exec $PY -m roseinfer.server --model smollm2 --port $PORT "$@" \
    > "$OUT/server_${label}_$round.log" 2>&1) &
  local pid=$!
  for _ in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  (cd "$HERE" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 \
    --random-input-len 70 --random-output-len 128 --concurrency 1,32 --num-prompts 8,64 \
    --no-progress --json "$OUT/serve_${label}_$round.json" > "$OUT/serve_${label}_$round.txt" 2>&1)
  pkill -f "roseinfer.server --model smollm2 --port $PORT"; wait $pid 2>/dev/null
}
tput_point() {  # tree label round
  (cd "$1" && PYTHONPATH=$1 $PY -m roseinfer.cli bench throughput --no-progress \
    --json "$OUT/tput_$2_$3.json" > "$OUT/tput_$2_$3.txt" 2>&1)
}
date -u +"start %FT%TZ"
for round in $(seq "${ROUNDS:-2}"); do
  serve_point "$BASE" base "$round"
  serve_point "$HERE" new "$round"
  tput_point "$BASE" base "$round"
  tput_point "$HERE" new "$round"
done
serve_point "$HERE" new_int8 1 --quantization int8
date -u +"end %FT%TZ"
