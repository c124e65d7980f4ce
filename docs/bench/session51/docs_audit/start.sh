#!/bin/bash
# usage: start.sh NAME PORT [args...]  -> starts server in background, writes pid to NAME.pid, waits for "serving on" (max 240s)
name=$1; port=$2; shift 2
cd /tmp/s51/wt_docs
PYTHONPATH=/tmp/s51/wt_docs setsid /work/main/.venv/bin/python -m roseinfer.cli serve --port $port "$@" > /tmp/s51/docs_audit/$name.log 2>&1 &
echo $! > /tmp/s51/docs_audit/$name.pid
for i in $(seq 1 240); do
  if grep -q "serving on" /tmp/s51/docs_audit/$name.log; then echo "up after ${i}s"; exit 0; fi
  if ! kill -0 $(cat /tmp/s51/docs_audit/$name.pid) 2>/dev/null; then echo "died"; cat /tmp/s51/docs_audit/$name.log; exit 1; fi
  sleep 1
done
echo timeout
