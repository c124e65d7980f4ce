#!/usr/bin/env bash
# LLM.generate per step, two trees alternated twice (worktrees in /tmp):
#   bash docs/bench/session57/generate_ab.sh 4e5d8dc HEAD
set -euo pipefail
cd "$(dirname "$0")/../../.."
for rev in "$1" "$2"; do
  [ -d "/tmp/sampler_ab_$rev" ] || git worktree add -q "/tmp/sampler_ab_$rev" "$rev"
done
for round in 1 2; do
  for rev in "$1" "$2"; do
    echo "== $rev (round $round)"
    PYTHONPATH=/tmp/sampler_ab_$rev .venv/bin/python docs/bench/session57/generate_ab.py 2>&1 \
      | grep "ms per step"
  done
done
