#!/bin/bash
# A ~2,000-token prompt's prefill in the engine (session 65's prefill_breakdown.py: the wall
# clock by layer kind), BASE's tree (a worktree) and this one in turns, PAIRS times.
#   BASE=/tmp/s66/base PAIRS=3 CHUNKS=512 bash docs/bench/session66/prefill_turns.sh
set -u
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
for i in $(seq "${PAIRS:-3}"); do
  for tree in "$BASE" "$ROOT"; do
    echo "# pair $i: $( [ "$tree" = "$ROOT" ] && echo this tree || echo "BASE $(git -C "$tree" rev-parse --short HEAD)")"
    (cd "$tree" && PYTHONPATH="$tree" "$ROOT/.venv/bin/python" "$ROOT/docs/bench/session65/prefill_breakdown.py" \
      2000 "${CHUNKS:-512}" 3 2>&1 | grep -v Loading)
  done
done
