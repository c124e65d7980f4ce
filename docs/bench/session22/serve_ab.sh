#!/usr/bin/env bash
# CONCURRENCY streams served (streamed /v1/completions, 70-token random prompts, 128 greedy
# output tokens, 4 x CONCURRENCY requests) for each --dtype DTYPE (default: auto, which is fp32
# on CPUs without AVX512-BF16, and bfloat16): WT_BASE's checkout and this one in turns, ROUNDS
# rounds. Output tok/s per run.
#   WT_BASE=/work/wt-base bash docs/bench/session22/serve_ab.sh ROUNDS CONCURRENCY [DTYPE...]
set -u
if [ $# -lt 3 ]; then set -- "$1" "$2" auto bfloat16; fi
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$HERE/.venv/bin/python
PORT=8793
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "$1"); do
  for dtype in "${@:3}"; do
    mode="--dtype $dtype"
    for tree in "$WT_BASE" "$HERE"; do
      rev="$(git -C "$tree" rev-parse --short HEAD)"
      # shellcheck disable=SC2086 # the mode is two words
      (cd "$tree" && PYTHONPATH=$tree exec $PY -m roseinfer.server --model smollm2 --port $PORT \
        $mode > /tmp/serve_ab_server.log 2>&1) &
      pid=$!
      for _ in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
      printf "round %s %s %s %s: " "$r" "$(date -u +%H:%M:%S)" "$rev" "$mode"
      (cd "$HERE" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 \
        --random-input-len 70 --random-output-len 128 --concurrency "$2" --num-prompts $((4 * $2)) \
        --seed "$r" --no-progress --server-pid $pid 2>&1 | grep -E "Output token throughput" | tr -s ' ')
      kill $pid; wait $pid 2>/dev/null
    done
  done
done
