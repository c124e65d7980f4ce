#!/bin/bash
# usage: start.sh LOG [flags...]   (port 18311) ; writes server.pid
LOG=$1; shift
cd /tmp/s59/audit_iso/wt
PYTHONPATH=/tmp/s59/audit_iso/wt nohup /work/main/.venv/bin/python -m roseinfer.server --host 127.0.0.1 --port 18311 --dtype float32 "$@" > /tmp/s59/audit_iso/$LOG 2>&1 &
echo $! > /tmp/s59/audit_iso/server.pid
for i in $(seq 1 300); do
  if grep -q "serving on" /tmp/s59/audit_iso/$LOG; then echo up after $i s; exit 0; fi
  if ! kill -0 $(cat /tmp/s59/audit_iso/server.pid) 2>/dev/null; then echo died; tail -20 /tmp/s59/audit_iso/$LOG; exit 1; fi
  sleep 1
done
echo timeout
