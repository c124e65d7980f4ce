#!/bin/sh
# step_breakdown.py (batch 48, bf16) and session 13's prefill_profile.py (one 2,000-token bf16
# prompt), base (WT_BASE) and this checkout in turns: the elementwise ops' lines.
# WT_BASE=/work/wt-base sh elementwise_ab.sh ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "$1"); do
  for tree in "$WT_BASE" "$here"; do
    echo "round $r $(date -u +%H:%M:%S) $(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
    (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/benchmarks/step_breakdown.py" --batch-size 48 --context 250 --steps 12 --dtype bfloat16 2>/dev/null | grep -E "step p50|norm|rotary|silu")
    (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session13/prefill_profile.py" bf16 2>/dev/null | grep -E "in all|norm|rotary|silu")
  done
done
