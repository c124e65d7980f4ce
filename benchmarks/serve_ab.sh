#!/usr/bin/env bash
# The served 32-stream short case (issue 22's: 70-token prompts, 128 tokens, 32 at once, 128
# requests) against a BASE tree (a worktree of an earlier commit) and this one in turn, the order
# reversed every other round: what a change of the request path costs the default request. Both
# trees run this checkout's venv and client; their C++ kernels are built from their own sources
# (the same where the change left them alone). Each round's throughput is printed; the servers'
# logs and the client's reports go to OUT.
#   BASE=/tmp/base OUT=docs/bench/sessionNN/serve_ab ROUNDS="1 2 3 4" bash benchmarks/serve_ab.sh
set -u
PY=${PY:-.venv/bin/python} PORT=${PORT:-8791} BASE=${BASE:?a worktree of the base commit}
OUT=${OUT:?a folder for the results}
run() {  # label tree seed
  env -C "$2" PYTHONPATH="$2" "$PWD/$PY" -m roseinfer.server --model smollm2 --port $PORT \
    --log-level warning > "$OUT/server_$1_$3.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  "$(dirname "$PY")/roseinfer" bench serve --base-url http://127.0.0.1:$PORT/v1 --random-input-len 70 \
    --random-output-len 128 --concurrency 32 --num-prompts 128 --seed "$3" --no-progress \
    --server-pid $pid > "$OUT/bench_$1_$3.txt" 2>&1
  echo "$1 seed $3: $(grep -i 'output token throughput' "$OUT/bench_$1_$3.txt")"
  kill $pid; wait $pid 2>/dev/null
}
date -u
for r in ${ROUNDS:-1 2}; do
  if [ $((r % 2)) = 1 ]; then order="base head"; else order="head base"; fi
  for label in $order; do
    if [ $label = base ]; then tree=$BASE; else tree=$PWD; fi
    run $label "$tree" $r
  done
done
date -u
