#!/usr/bin/env bash
# Rounds of served short case: asyncio+h11, uvloop+h11, uvloop+httptools (order rotated).
cd "$(dirname "$0")/../../../.."
for r in $(seq 1 ${ROUNDS:-3}); do
  echo "## round $r $(date -u +%H:%M:%S)"
  set -- "asyncio h11" "uvloop h11" "uvloop httptools"
  if [ $((r % 2)) = 0 ]; then set -- "uvloop httptools" "uvloop h11" "asyncio h11"; fi
  for m in "$@"; do set -- $m; echo "served $m"; LOOP=$1 HTTP=$2 docs/bench/session49/uvloop/run.sh 2>&1 | grep -E "rt|Output|steps|span|cpu"; done
done
