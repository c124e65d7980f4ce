#!/usr/bin/env bash
# Session 36: servers in turns, 128 requests of 70 + 128 tokens at concurrency 32 (streamed
# /v1/completions, `roseinfer bench serve`), int8 weights and cache. Run from the repository root:
#   SIDES="new base" BASE=/path/to/a/worktree/of/BASE ROUNDS=4 bash docs/bench/session36/served_ab.sh
# A side names the server: "base" runs BASE's tree; "nosteal" (NOSTEAL=1, read by the first
# experiment build), "passive" (OMP_WAIT_POLICY=passive), "spinN" (GOMP_SPINCOUNT=N) and any other
# name run this tree with that variable.
set -u
PY=$PWD/.venv/bin/python; PORT=8811; OUT=${OUT:-/tmp/served_ab}; mkdir -p $OUT
ARGS=${CASE_ARGS:---random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128}
SERVER_ARGS=${SERVER_ARGS:---quantization int8 --kv-cache-dtype int8}
for r in $(seq 1 ${ROUNDS:-3}); do
  for side in ${SIDES:-steal nosteal}; do
    case $side in nosteal) E="NOSTEAL=1";; passive) E="OMP_WAIT_POLICY=passive";; spin*) E="GOMP_SPINCOUNT=${side#spin}";; *) E="X=1";; esac
    if [ $side = base ]; then D=$BASE; else D=$PWD; fi
    env -C $D PYTHONPATH=$D $E $PY -m roseinfer.server --model smollm2 --port $PORT $SERVER_ARGS > $OUT/server_$side.log 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.5; done
    if [ -n "${PIN:-}" ]; then
      tids=($(ls /proc/$pid/task | sort -n))
      taskset -p -c 0 ${tids[0]} >/dev/null; taskset -p -c 1 ${tids[1]} >/dev/null; taskset -p -c $PIN ${tids[2]} >/dev/null
    fi
    curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' \
      -d '{"model":"x","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
    $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --seed $r $ARGS > $OUT/${side}_$r.txt 2>&1
    printf "%s round %s %-8s " "$(date -u +%H:%M:%S)" $r $side
    awk -F: '/Output token throughput/{o=$2} /Median TTFT/{m=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
      END{printf "out tok/s %s, TTFT p50 %s, TPOT p50 %s, failed %s\n",o,m,t,f}' $OUT/${side}_$r.txt
    kill $pid; wait $pid 2>/dev/null
  done
done
