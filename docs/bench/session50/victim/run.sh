#!/bin/bash
# Session 48's big-response victim (session 50: the prompt parts written once, base 0bc2d46) (n = 16, echo, logprobs and prompt_logprobs 20 of a 400-word
# prompt, 300 tokens; a short completion sent every 50 ms beside it) against TREE's server of
# session 47's 2-layer model; session 48 left the victim waiting ~0.9 s on the steps computing
# the prompt's logprobs.   TREES="/tmp/s49/base /work/main" ROUNDS=2 bash run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/work/main/.venv/bin/python
cd /tmp  # not a checkout: `python -m` puts the working directory first on sys.path
for r in $(seq 1 ${ROUNDS:-2}); do
  for TREE in ${TREES:-/tmp/s50/wt /work/main}; do
    PORT=18601
    PYTHONPATH=$TREE nohup $py -m roseinfer.server --model /tmp/s47/audit/tinysmol --port $PORT --dtype float32 --num-kv-blocks 2048 > /tmp/victim_$PORT.log 2>&1 &
    pid=$!
    for i in $(seq 240); do curl -sf localhost:$PORT/health >/dev/null && break; sleep 1; done
    echo "== round $r $TREE ($(git -C $TREE rev-parse --short HEAD)) $(date -u +%H:%M:%S)"
    AUDIT_PORT=$PORT timeout 300 $py $here/../../session48/victims/big_response.py $PORT 16 400 300
    kill $pid; wait $pid 2>/dev/null; sleep 1
  done
done
