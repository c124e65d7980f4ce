#!/bin/sh
# One stream's median decode step (one_stream_ops.py: 2 x 200 steps after a 70-token prompt),
# WT_BASE's checkout against this one in turns, bf16 and int8 weights, ROUNDS rounds.
#   WT_BASE=/work/wt-base sh docs/bench/session20/one_stream_ab.sh ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "$1"); do
  for tree in "$WT_BASE" "$here"; do
    rev="$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
    for mode in bf16 int8; do
      printf "round %s %s %s " "$r" "$(date -u +%H:%M:%S)" "$rev"
      (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session20/one_stream_ops.py" $mode 200 2 2>/dev/null)
    done
  done
done
