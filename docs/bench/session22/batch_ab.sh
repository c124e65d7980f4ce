#!/bin/sh
# Decode steps at small batches (session 20's batch_steps.py), the checkouts in WT_BASE (one or
# more) and this one in turns, fp32 and bf16, ROUNDS rounds.
#   WT_BASE="/work/wt-base" sh docs/bench/session22/batch_ab.sh ROUNDS "4 8 16 20" ["fp32 bf16"]
here=$(cd "$(dirname "$0")/../../.." && pwd)
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "$1"); do
  for batch in $2; do
    for mode in ${3:-fp32 bf16}; do
      for tree in $WT_BASE "$here"; do
        rev="$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
        printf "round %s %s %s " "$r" "$(date -u +%H:%M:%S)" "$rev"
        (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session20/batch_steps.py" $mode $batch 30 2>/dev/null)
      done
    done
  done
done
