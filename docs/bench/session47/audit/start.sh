#!/bin/bash
cd /tmp/s47/audit
pid=$(cat server.pid 2>/dev/null); [ -n "$pid" ] && kill $pid 2>/dev/null; sleep 1
nohup /work/main/.venv/bin/python -m roseinfer.server --model /tmp/s47/audit/tinysmol --port 18101 --dtype float32 --num-kv-blocks 512 "$@" > server.log 2>&1 &
echo $! > server.pid
for i in $(seq 60); do curl -sf localhost:18101/health >/dev/null && break; sleep 1; done
curl -s localhost:18101/health; echo
