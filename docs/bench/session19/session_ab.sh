#!/bin/sh
# The session's start (WT_BASE, e3e40dd) against this checkout, in turns: the batch-48 decode
# step (step_breakdown.py, bf16 and int8 + int8 KV) and one stream (session 15's one_stream.py).
# WT_BASE=/work/wt-base sh session_ab.sh ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "$1"); do
  for tree in "$WT_BASE" "$here"; do
    rev="$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
    for mode in "--dtype bfloat16" "--dtype float32 --quantization int8 --kv-cache-dtype int8"; do
      printf "round %s %s %s: " "$r" "$(date -u +%H:%M:%S)" "$rev"
      # shellcheck disable=SC2086
      (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/benchmarks/step_breakdown.py" --batch-size 48 --context 250 --steps 12 $mode 2>/dev/null | grep -E "step p50")
    done
    printf "round %s %s %s one stream:\n" "$r" "$(date -u +%H:%M:%S)" "$rev"
    (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session15/one_stream.py" 2>/dev/null)
  done
done
