#!/usr/bin/env bash
# The sampler alone, two trees alternated (BASE's roseinfer, then HEAD's), each batch size:
#   bash docs/bench/session56/sampler_ab.sh 379720c HEAD
# (benchmarks/sampler_step.py of the working tree drives both; BASE must have layers/infill.py;
# arguments after the two revisions go to it, e.g. --kernels)
set -euo pipefail
cd "$(dirname "$0")/../../.."
base=$1; head=$2; shift 2
for rev in "$base" "$head"; do
  dir=/tmp/sampler_ab_$rev
  [ -d "$dir" ] || git worktree add -q "$dir" "$rev"
done
for round in 1 2; do
  for b in 1 8 32; do
    for rev in "$base" "$head"; do
      printf '%s batch %s: ' "$rev" "$b"
      PYTHONPATH=/tmp/sampler_ab_$rev .venv/bin/python benchmarks/sampler_step.py \
        --batch-size "$b" --vocab 49152 "$@" | tail -1
    done
  done
done
