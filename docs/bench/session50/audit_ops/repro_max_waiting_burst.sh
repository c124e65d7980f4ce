#!/bin/bash
# F2: --max-waiting-requests 2, default --max-num-seqs 64, idle server: a burst of 8 simultaneous requests -> 6 of them 503.
cd /tmp/s50/audit_ops && ./start.sh 8874 repro_burst.log --max-waiting-requests 2 --log-stats-interval 0
PYTHONPATH=/tmp/s50/wt /work/main/.venv/bin/python /tmp/s50/audit_ops/burst.py http://127.0.0.1:8874
kill -TERM $(cat /tmp/s50/audit_ops/server.pid)
