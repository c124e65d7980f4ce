# Engine decode steps at batch 48 (250-token prompts), BASE and NEW checkouts in turns, through
# this checkout's benchmarks/step_breakdown.py (its "attention" line times the decode attention).
#   sh docs/bench/session18/attention_ab.sh /work/wt-base /work/main 3
BASE=$1; NEW=$2; ROUNDS=$3
SCRIPT=$(cd "$(dirname "$0")/../../.." && pwd)/benchmarks/step_breakdown.py
for r in $(seq "$ROUNDS"); do
  for mode in "--dtype float32" "--dtype bfloat16"; do
    for tree in "$BASE" "$NEW"; do
      echo "round $r $(date -u +%H:%M:%S) $tree $mode"
      (cd "$tree" && PYTHONPATH="$tree" .venv/bin/python "$SCRIPT" --batch-size 48 --context 250 \
        --steps 12 $mode 2>&1 | grep -E "step p50|attention|linear ")
    done
  done
done
