#!/bin/sh
# Offline `bench throughput` at two checkouts, in turns: BASE (a worktree of the revision before)
# and NEW (this checkout), ROUNDS rounds of each mode; each run's step trace goes to
# OUT/<round>_<tree>_<mode>.json for decode_steps.py. Prints one summary line per run.
#   sh docs/bench/session17/offline_ab.sh /work/wt-base /work/main 3 /tmp/traces [fp32 int8_kv8 bf16]
BASE=$1 NEW=$2 ROUNDS=${3:-3} OUT=${4:-/tmp/offline_ab}
shift 4 2>/dev/null
MODES=${*:-fp32 int8_kv8 bf16}
mkdir -p "$OUT"
for round in $(seq "$ROUNDS"); do
  for mode in $MODES; do
    case $mode in
      fp32) flags="--dtype auto" ;;
      int8_kv8) flags="--quantization int8 --kv-cache-dtype int8" ;;
      bf16) flags="--dtype bfloat16" ;;
    esac
    for tree in "$BASE" "$NEW"; do
      trace="$OUT/${round}_$(basename "$tree")_$mode.json"
      out=$(cd "$tree" && .venv/bin/roseinfer bench throughput --no-progress $flags \
        --trace-json "$trace" 2>/dev/null | grep "Output token throughput")
      echo "round $round | $(basename "$tree") | $mode | $out"
    done
  done
done
