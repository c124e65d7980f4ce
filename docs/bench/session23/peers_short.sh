#!/usr/bin/env bash
# A second round of peers_here.sh's "short" case (32 streams) for vLLM fp32 and roseinfer's
# default, and one greedy completion from each (the same text expected: both run SmolLM2 in fp32).
#   VLLM_PY=/tmp/vllmenv/bin/python HF=/tmp/s23/hf_fp32 OUT=/tmp/peers_r2 \
#     bash docs/bench/session23/peers_short.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$HERE/.venv/bin/python
OUT=${OUT:-/tmp/peers_r2}; mkdir -p "$OUT"
PORT=8801
echo "# $(date -u '+%F %H:%M UTC'), roseinfer $(git -C "$HERE" rev-parse --short HEAD)"
for run in vllm_fp32 rose_fp32; do
  if [ $run = vllm_fp32 ]; then
    env HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=4 \
      LD_PRELOAD="/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4:$(dirname "$VLLM_PY")/../lib/libiomp5.so" \
      "$VLLM_PY" -m vllm.entrypoints.openai.api_server --model "$HF" --dtype float32 \
      --served-model-name SmolLM2-135M-Instruct --host 127.0.0.1 --port $PORT --max-model-len 4096 \
      > "$OUT/server_$run.log" 2>&1 &
  else
    "$PY" -m roseinfer.server --model smollm2 --port $PORT > "$OUT/server_$run.log" 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 400); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 1; done
  printf "%s greedy: " $run
  curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' \
    -d '{"model":"SmolLM2-135M-Instruct","prompt":"The capital of France is","max_tokens":24,"temperature":0}' \
    | "$PY" -c "import json,sys; print(repr(json.load(sys.stdin)['choices'][0]['text']))"
  (cd "$HERE" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress \
    --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed 5 \
    > "$OUT/${run}_short.txt" 2>&1)
  printf "%s %s short: " "$(date -u +%H:%M:%S)" $run
  grep -E "Output token throughput|Median TPOT" "$OUT/${run}_short.txt" | tr -s ' ' | tr '\n' ' '; echo
  kill $pid; wait $pid 2>/dev/null; pkill -f "port $PORT"; sleep 3
done
