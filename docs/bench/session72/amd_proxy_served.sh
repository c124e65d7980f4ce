#!/usr/bin/env bash
# The AMD hosts' paths on this AMX host, session 45's commit (10ba598, the AMD host's last goals
# run) against this session's, served: each tree's kernels built without AMX at -O3
# (/tmp/s45: its native cflags + -mno-amx-*; /tmp/head72: ROSEINFER_KERNEL_ISA=avx512_bf16 with
# _ISA_OPT -O3), oneDNN held to AVX512_CORE_BF16 (as on Zen 5, where it has no AMX), aten at
# avx512 and the AMD makers' choices (dpbf16 pairs, nta prefetches). The same client
# (`roseinfer bench serve` of /work/main) and cases as docs/bench/session25/peers_here.sh:
# short (32 streams), long-prompt (~2,000 tokens one at a time), long-prompt-8.
#   ROUNDS=2 OUT=docs/bench/session72/amd_proxy bash docs/bench/session72/amd_proxy_served.sh
set -u
MAIN=/work/main
PY=$MAIN/.venv/bin/python
OUT=${OUT:-/tmp/amd_proxy}; mkdir -p "$OUT"
PORT=8801
export ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 ROSEINFER_BF16_PAIRS=dpbf16 \
  ROSEINFER_PREFETCH_ONCE=nta
bench() {  # label case args...
  local label=$1 case=$2; shift 2
  (cd "$MAIN" && env -u ROSEINFER_KERNEL_ISA $PY -m roseinfer.cli bench serve \
    --base-url http://127.0.0.1:$PORT/v1 --no-progress --json "$OUT/${label}_$case.json" "$@" \
    > "$OUT/${label}_$case.txt" 2>&1)
  printf "%s %-18s %-14s " "$(date -u +%H:%M:%S)" "$label" "$case"
  awk -F: '/Output token throughput/{o=$2} /Median TTFT/{m=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
    END{gsub(/ /,"",o);gsub(/ /,"",m);gsub(/ /,"",t);gsub(/ /,"",f);
    printf "out tok/s %s, TTFT p50 %s ms, TPOT p50 %s ms, failed %s\n",o,m,t,f}' "$OUT/${label}_$case.txt"
}
for r in $(seq "${ROUNDS:-2}"); do
  revs="s45 head72"; [ $((r % 2)) = 0 ] && revs="head72 s45"
  for rev in $revs; do
    for mode in bf16 int8_kv8; do
      label=${rev}_${mode}_r$r
      isa=(); [ $rev = head72 ] && isa=(ROSEINFER_KERNEL_ISA=avx512_bf16)
      flags=(); [ $mode = int8_kv8 ] && flags=(--quantization int8 --kv-cache-dtype int8)
      env -C /tmp/$rev PYTHONPATH=/tmp/$rev "${isa[@]}" $PY -m roseinfer.server --model smollm2 \
        --port $PORT "${flags[@]}" > "$OUT/server_$label.log" 2>&1 &
      pid=$!
      for _ in $(seq 1 400); do
        curl -sf http://127.0.0.1:$PORT/health >/dev/null && break
        kill -0 $pid 2>/dev/null || { echo "$label did not start"; break; }
        sleep 1
      done
      curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' \
        -d '{"model":"SmolLM2-135M-Instruct","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
      bench "$label" short --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed 1
      bench "$label" long-prompt --preset long-prompt --seed 3
      bench "$label" long-prompt-8 --preset long-prompt-8 --seed 4
      kill $pid; wait $pid 2>/dev/null; sleep 3
    done
  done
done
