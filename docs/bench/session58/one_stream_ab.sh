#!/usr/bin/env bash
# One stream's step (benchmarks/one_stream.py of this tree), two trees alternated:
#   bash docs/bench/session58/one_stream_ab.sh a8f23be HEAD [PAIRS]
# Each tree's roseinfer comes first on PYTHONPATH (a script's own folder is sys.path[0]).
set -euo pipefail
cd "$(dirname "$0")/../../.."
base=$1; head=$2; pairs=${3:-3}
for rev in "$base" "$head"; do
  dir=/tmp/one_stream_ab_$rev
  [ -d "$dir" ] || git worktree add -q --detach "$dir" "$rev"
done
trap 'for rev in "$base" "$head"; do git worktree remove --force /tmp/one_stream_ab_$rev; done' EXIT
for pair in $(seq "$pairs"); do
  for rev in "$base" "$head"; do
    echo "== $rev (pair $pair, $(date -u +%H:%M:%S))"
    PYTHONPATH=/tmp/one_stream_ab_$rev .venv/bin/python benchmarks/one_stream.py --rounds 15 \
      --steps 4 2>&1 | grep -E "step|bandwidth|handoff"
  done
done
