#!/usr/bin/env bash
# Served short case (int8 + int8 KV, 32 streams), asyncio against uvloop (h11 both), order alternating.
cd "$(dirname "$0")/../../../.."
for r in $(seq 1 ${ROUNDS:-4}); do
  echo "## round $r $(date -u +%H:%M:%S)"
  set -- asyncio uvloop
  if [ $((r % 2)) = 0 ]; then set -- uvloop asyncio; fi
  for m in "$@"; do echo "served $m h11"; LOOP=$m HTTP=h11 docs/bench/session49/uvloop/run.sh 2>&1 | grep -E "rt|Output|steps|span|cpu"; grep -m1 "^uvicorn" ${OUT:-/tmp/served_steps}/srv.log; done
done
