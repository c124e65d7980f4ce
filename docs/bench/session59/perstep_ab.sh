#!/usr/bin/env bash
# Served: a greedy stream beside an n=32 request with top_k = V, top_p 0.999999 (the isolation
# audit's p_perstep.py), each tree's server in turn (tiny random model, 512 KV blocks).
set -u
for round in 1 2; do
  for tree in "$@"; do
    echo "== $tree (round $round)"
    (cd "$tree" && PYTHONPATH="$tree" nohup /work/main/.venv/bin/python -m roseinfer.server --host 127.0.0.1 --port 18311 --dtype float32 --model /tmp/s47/audit/tinysmol --num-kv-blocks 512 > /tmp/s59/perstep_server.log 2>&1 &)
    for i in $(seq 1 180); do grep -q "serving on" /tmp/s59/perstep_server.log && break; sleep 1; done
    (cd /tmp/s59/audit_iso && N=32 timeout 300 /work/main/.venv/bin/python p_perstep.py plain top_k_huge_p 2>&1 | tail -3)
    pkill -f "port 18311"; sleep 2
  done
done
