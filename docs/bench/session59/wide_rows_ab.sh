#!/usr/bin/env bash
# A sampled step whose rows' top-p / top-k sets reach the whole vocabulary (session 59's
# isolation audit, F1), two trees alternated ROUNDS times: the sampler alone with the CPU
# backend's passes, random logits x 0.3 (flat, like a random model's), T 0.7.
#   bash docs/bench/session59/wide_rows_ab.sh BASE_TREE HEAD_TREE [ROUNDS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
for round in $(seq "${3:-2}"); do
  for tree in "$1" "$2"; do
    echo "== $tree (round $round)"
    PYTHONPATH="$tree" "$HERE/.venv/bin/python" "$HERE/docs/bench/session59/wide_rows.py"
  done
done
