#!/bin/sh
# step_breakdown.py at batch 48, base (WT_BASE, the commit before) and this checkout in turns.
# WT_BASE=/work/wt-base sh attention_ab.sh DTYPE ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "$2"); do
  for tree in "$WT_BASE" "$here"; do
    printf "round %s %s %s: " "$r" "$(date -u +%H:%M:%S)" "$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
    (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/benchmarks/step_breakdown.py" --batch-size 48 --context 250 --steps 12 --dtype "$1" | grep -E "step p50|attention  " | tr -s ' ' | tr '\n' ' ')
    echo
  done
done
