#!/bin/bash
# F1: Ctrl-C (SIGINT) with streams in flight: streams hang ~5 s, then are cut with no error event and no [DONE];
# a non-streamed request gets text/plain "Internal Server Error"; 4 tracebacks in the log. (SIGTERM, same test: clean error events at once.)
cd /tmp/s50/wt
PYTHONPATH=/tmp/s50/wt setsid /work/main/.venv/bin/python /tmp/s50/audit_ops/sigint_launch.py --port 8874 --log-stats-interval 0 > /tmp/s50/audit_ops/repro_sigint.log 2>&1 &
PID=$!; for i in $(seq 40); do curl -s -m1 localhost:8874/health >/dev/null && break; sleep 1; done
MAXTOK=400 PYTHONPATH=/tmp/s50/wt /work/main/.venv/bin/python /tmp/s50/audit_ops/sigterm.py http://127.0.0.1:8874 $PID ${1:-SIGINT}
grep -c Traceback /tmp/s50/audit_ops/repro_sigint.log
