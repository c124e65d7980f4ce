#!/usr/bin/env bash
# One stream served (bf16, the default; 8 requests of 70 random tokens x 128, one at a time):
# TPOT p50 with the HTTP thread on asyncio and on uvloop (h11 both), alternated, ROUNDS rounds.
cd "$(dirname "$0")/../../../.."
PY=.venv/bin/python; PORT=8813
OUT=${OUT:-/tmp/served_steps}; mkdir -p "$OUT"
RT=${RT:-/tmp/rt.so}; [ -e "$RT" ] || gcc -O2 -shared -fPIC -pthread -o "$RT" docs/bench/session45/rt.c
for r in $(seq 1 ${ROUNDS:-4}); do
  set -- asyncio uvloop
  if [ $((r % 2)) = 0 ]; then set -- uvloop asyncio; fi
  for loop in "$@"; do
    LOOP=$loop HTTP=h11 DECODE_ROWS=1 PYTHONPATH=. $PY docs/bench/session49/uvloop/served_steps.py --model smollm2 --port $PORT --log-stats-interval 0 ${SERVER_ARGS:-} > $OUT/one.log 2>&1 &
    pid=$!
    for _ in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.5; done
    curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' -d '{"model":"x","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
    rt=$($PY -c "import ctypes;rt=ctypes.CDLL('$RT');rt.round_trip_ns.restype=ctypes.c_double;print(round(rt.round_trip_ns(2000)))")
    tpot=$($PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed 1 2>&1 | awk -F: '/Median TPOT/{gsub(/ /,"",$2); print $2}')
    kill -TERM $pid; wait $pid 2>/dev/null
    echo "round $r $loop rt $rt TPOT p50 $tpot ms; $(grep -E '^steps|span' $OUT/one.log | tr '\n' ' ')"
  done
done
