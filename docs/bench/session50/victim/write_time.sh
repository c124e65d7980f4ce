#!/bin/bash
# The big response's writing time (timed_server.py) in TREE's server, alternated: n = 16, echo,
# logprobs and prompt_logprobs 20 of a 400-word prompt, 300 tokens (session 48's big_response.py,
# its victim beside it).   TREES="/tmp/s50/wt /work/main" ROUNDS=3 bash write_time.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/work/main/.venv/bin/python
cd /tmp
for r in $(seq 1 ${ROUNDS:-3}); do
  for TREE in ${TREES:-/tmp/s50/wt /work/main}; do
    PORT=18602
    PYTHONPATH=$TREE nohup $py $here/timed_server.py --model /tmp/s47/audit/tinysmol --port $PORT --dtype float32 --num-kv-blocks 2048 > /tmp/victim_$PORT.log 2>&1 &
    pid=$!
    for i in $(seq 240); do curl -sf localhost:$PORT/health >/dev/null && break; sleep 1; done
    echo "== round $r $TREE ($(git -C $TREE rev-parse --short HEAD)) $(date -u +%H:%M:%S)"
    AUDIT_PORT=$PORT timeout 300 $py $here/../../session48/victims/big_response.py $PORT 16 400 300
    kill $pid; wait $pid 2>/dev/null; sleep 1
    grep response_body /tmp/victim_$PORT.log | sort -k2 -n | tail -1
  done
done
