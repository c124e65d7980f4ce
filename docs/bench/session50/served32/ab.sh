#!/bin/bash
# The served short case (SmolLM2 int8 + int8 KV, 128 requests of 70 random tokens x 128,
# concurrency 32, issue 22's client) against TREES' servers alternated: this session's request
# path (body checks, tool modes, the response writer) against its base, for a regression.
#   TREES="/tmp/s50/wt /work/main" ROUNDS=2 bash ab.sh
set -u
py=/work/main/.venv/bin/python
cd /tmp
for r in $(seq 1 ${ROUNDS:-2}); do
  for TREE in ${TREES:-/tmp/s50/wt /work/main}; do
    PORT=18700
    PYTHONPATH=$TREE $py -m roseinfer.server --model smollm2 --port $PORT --quantization int8 --kv-cache-dtype int8 --log-stats-interval 0 > /tmp/ab32_$PORT.log 2>&1 &
    pid=$!
    for i in $(seq 240); do curl -sf localhost:$PORT/health >/dev/null && break; sleep 0.5; done
    curl -s localhost:$PORT/v1/completions -H 'Content-Type: application/json' -d '{"prompt":"Hello","max_tokens":8}' >/dev/null
    rt=$($py -c "import ctypes;rt=ctypes.CDLL('/tmp/rt.so');rt.round_trip_ns.restype=ctypes.c_double;print(round(rt.round_trip_ns(2000)))")
    echo "== round $r $TREE ($(git -C $TREE rev-parse --short HEAD)) $(date -u +%H:%M:%S) rt $rt"
    (cd /work/main && PYTHONPATH=$TREE $py -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed $r 2>&1 | grep -E "Output token|Median TPOT")
    kill $pid; wait $pid 2>/dev/null; sleep 1
  done
done
