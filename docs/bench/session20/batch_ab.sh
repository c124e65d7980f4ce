#!/bin/sh
# Decode steps at batch 32 and 64 (batch_steps.py), WT_BASE's checkout against this one in turns,
# bf16, fp32 and int8 + int8 KV, ROUNDS rounds.
#   WT_BASE=/work/wt-base sh docs/bench/session20/batch_ab.sh ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "$1"); do
  for batch in 32 64; do
    for mode in bf16 fp32 int8+kv8; do
      for tree in "$WT_BASE" "$here"; do
        rev="$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
        printf "round %s %s %s " "$r" "$(date -u +%H:%M:%S)" "$rev"
        (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session20/batch_steps.py" $mode $batch 20 2>/dev/null)
      done
    done
  done
done
