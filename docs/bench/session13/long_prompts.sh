#!/usr/bin/env bash
# The long-prompt presets served (streamed /v1/completions, greedy, 32 output tokens): this tree
# in float32 (the default dtype here) and with int8 weights and KV cache, and BASE (a worktree of
# the commit before session 13's AVX2 work) with int8 weights and KV cache, one after another.
#   BASE=/work/wt-base OUT=docs/bench/session13/long_prompts [RUNS="new_fp32 ..."] [PRESETS=...] \
#     docs/bench/session13/long_prompts.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$HERE/.venv/bin/python
OUT=${OUT:-/tmp/long_prompts}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
PORT=8792
serve() {  # tree label mode-flags...
  local tree=$1 label=$2; shift 2
  (cd "$tree" && PYTHONPATH=$tree exec $PY -m roseinfer.server --model smollm2 --port $PORT "$@" \
    > "$OUT/server_$label.log" 2>&1) &
  local pid=$!
  for _ in $(seq 1 300); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  # Each preset its own --seed: with one the presets would draw the same first prompts, and
  # the server's prefix cache would answer the second preset's from the first's.
  local seed
  for preset in ${PRESETS:-long-prompt long-prompt-8 shared-prefix}; do
    case $preset in long-prompt) seed=1 ;; long-prompt-8) seed=2 ;; shared-prefix) seed=3 ;; esac
    (cd "$HERE" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 \
      --preset $preset --seed $seed --no-progress --server-pid $pid \
      --json "$OUT/${label}_$preset.json" \
      > "$OUT/${label}_$preset.txt" 2>&1)
  done
  pkill -f "roseinfer.server --model smollm2 --port $PORT"; wait $pid 2>/dev/null
}
date -u +"start %FT%TZ"
for run in ${RUNS:-new_fp32 new_int8_kv8 base_int8_kv8}; do
  case $run in
    new_fp32) serve "$HERE" new_fp32 ;;
    new_int8_kv8) serve "$HERE" new_int8_kv8 --quantization int8 --kv-cache-dtype int8 ;;
    base_int8_kv8) serve "$BASE" base_int8_kv8 --quantization int8 --kv-cache-dtype int8 ;;
    base_fp32) serve "$BASE" base_fp32 ;;  # session 16
  esac
done
date -u +"end %FT%TZ"
