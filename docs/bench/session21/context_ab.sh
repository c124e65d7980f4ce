#!/bin/sh
# Decode steps (context_steps.py) at one stream of 2,000 tokens and 32 streams of 300, WT_BASE's
# checkout against this one in turns, bf16 and int8 + int8 KV, ROUNDS rounds.
#   WT_BASE=/work/wt-base sh docs/bench/session21/context_ab.sh ROUNDS
here=$(cd "$(dirname "$0")/../../.." && pwd)
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "$1"); do
  for shape in "1 2000" "32 300"; do
    for mode in bf16 int8+kv8; do
      for tree in "$WT_BASE" "$here"; do
        rev="$(git -C "$tree" rev-parse --short HEAD)$(git -C "$tree" diff --quiet || echo +)"
        printf "round %s %s %s " "$r" "$(date -u +%H:%M:%S)" "$rev"
        (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" "$here/docs/bench/session21/context_steps.py" $mode $shape 30 2>/dev/null)
      done
    done
  done
done
