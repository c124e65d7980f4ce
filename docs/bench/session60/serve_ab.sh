#!/usr/bin/env bash
# Served A/B of two trees (the request path changed this session: the reasoning parser's hooks
# in the output processor and the stream), each server in turn, ROUNDS times: 32 streams of
# 70-token prompts and 128 tokens, bf16 (default flags). From the repository root:
#   bash docs/bench/session60/serve_ab.sh TREE_A TREE_B [ROUNDS]
set -euo pipefail
A=$1; B=$2; ROUNDS=${3:-2}; PY=$(pwd)/.venv/bin/python
for round in $(seq 1 "$ROUNDS"); do
  for tree in "$A" "$B"; do
    (cd "$tree" && PYTHONPATH=. "$PY" -m roseinfer.server --port 18350 >/tmp/serve_ab.log 2>&1 &)
    for _ in $(seq 1 120); do curl -s 127.0.0.1:18350/health >/dev/null && break; sleep 1; done
    echo "== $tree (round $round, $(git -C "$tree" rev-parse --short HEAD))"
    PYTHONPATH=. "$PY" -m roseinfer.cli bench serve --base-url http://127.0.0.1:18350/v1 \
      --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 64 2>&1 \
      | grep -E "Output token throughput|Mean TPOT|Median TPOT|Median TTFT" || true
    pkill -f "roseinfer.server --port 18350" || true
    sleep 2
  done
done
