#!/bin/bash
# start.sh PORT LOG [server flags...]: start the server in the background, pid in /tmp/s50/audit_ops/server.pid; wait for /health
PORT=$1; LOG=$2; shift 2
cd /tmp/s50/wt
PYTHONPATH=/tmp/s50/wt setsid /work/main/.venv/bin/python -m roseinfer.server --model smollm2 --host 127.0.0.1 --port $PORT "$@" > /tmp/s50/audit_ops/$LOG 2>&1 &
echo $! > /tmp/s50/audit_ops/server.pid
for i in $(seq 60); do curl -s -m 1 localhost:$PORT/health >/dev/null && break; kill -0 $(cat /tmp/s50/audit_ops/server.pid) 2>/dev/null || break; sleep 1; done
echo "pid $(cat /tmp/s50/audit_ops/server.pid)"; curl -s -m1 localhost:$PORT/health; echo
