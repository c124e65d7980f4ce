#!/usr/bin/env bash
# A/B, alternated: base (b4071a1 at /tmp/basecheck) vs new (main at /work/main); same client.
set -u
PY=/work/main/.venv/bin/python
OUT=/tmp/ab; mkdir -p $OUT
PORT=8790
serve_point() {  # tree label round
  local tree=$1 label=$2 round=$3
  cd $tree
  PYTHONPATH=$tree $PY -m roseinfer.server --model smollm2 --port $PORT --log-level warning > $OUT/server_${label}_$round.log 2>&1 &
  local pid=$!
  cd /
  for i in $(seq 1 120); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  (cd /work/main && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --random-input-len 70 --random-output-len 128 --concurrency 1,32 --num-prompts 8,64 --no-progress --server-pid $pid --json $OUT/serve_${label}_$round.json > $OUT/serve_${label}_$round.txt 2>&1)
  kill $pid; wait $pid 2>/dev/null
  for i in $(seq 1 30); do curl -sf http://127.0.0.1:$PORT/health >/dev/null || break; sleep 1; done
}
tput_point() {
  local tree=$1 label=$2 round=$3
  (cd $tree && PYTHONPATH=$tree $PY -m roseinfer.cli bench throughput --no-progress --json $OUT/tput_${label}_$round.json > $OUT/tput_${label}_$round.txt 2>&1)
}
date -u +"start %FT%TZ"
for round in 1 2; do
  serve_point /tmp/basecheck base $round
  serve_point /work/main new $round
  tput_point /tmp/basecheck base $round
  tput_point /work/main new $round
done
date -u +"end %FT%TZ"
