#!/bin/bash
# Each invalid / odd flag combination: exit code and the last lines of output (124 = still running after 45 s: accepted).
cd /tmp/s50/wt
run() {
  PYTHONPATH=/tmp/s50/wt timeout -s TERM 45 /work/main/.venv/bin/python -m roseinfer.server --host 127.0.0.1 --port 8872 --log-stats-interval 0 "$@" > /tmp/s50/audit_ops/flag.out 2>&1
  rc=$?
  echo "### $* -> rc=$rc"; grep -v "^Loading model\|Waiting for app\|Application\|Started server\|Finished server\|Shutting down\|objects alive" /tmp/s50/audit_ops/flag.out | tail -4 | sed 's/^/    /'
}
for args in "$@"; do eval run $args; done
