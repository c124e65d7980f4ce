#!/usr/bin/env bash
# Reproduce BENCHMARKS.md: every number there comes from one of these commands. Each step takes
# a few minutes at most on 2 CPU cores; run one with `benchmarks/run_all.sh scheduler|throughput|serve`.
# Outputs (text logs, JSON, PNG) go to docs/bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-docs/bench}
PORT=${PORT:-8765}
mkdir -p "$OUT"
what=${1:-all}

# Each log starts and ends with the time, the commit and the load average (other work on the
# machine shows up there: numbers taken under load are not comparable).
# WAIT_QUIET=1: before each benchmark wait (up to 15 min) until the machine has been idle for 5 s
# (under 0.2 cores busy): on 2 cores another process's threads can slow a step down tenfold.
quiet() {
  [[ ${WAIT_QUIET:-0} == 1 ]] || return 0
  for _ in $(seq 180); do
    busy=$(busy_cores 5)
    awk -v b="$busy" 'BEGIN { exit !(b < 0.2) }' && return 0
  done
  echo "# warning: the machine did not get quiet (busy cores $busy)"
}
busy_cores() {  # average busy cores over $1 seconds, from /proc/stat
  read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
  sleep "$1"
  read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
  awk -v b=$(( (u2+n2+s2+q2+sq2+st2) - (u1+n1+s1+q1+sq1+st1) )) -v t="$1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.2f", b / hz / t }'
}
stamp() { echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- roseinfer && echo "" || echo "+uncommitted") loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; }

# The machine's speed right now (host contention changes it by a third): logged before and after.
probe() { { stamp; $PY benchmarks/machine_probe.py; } 2>&1 | tee -a "$OUT/machine_probe.txt"; }
probe
trap probe EXIT

if [[ $what == all || $what == scheduler ]]; then
  # 1. The seeds' benchmark: their exact command (warm-up 0, so the first steps are cold)...
  quiet; { stamp; $PY -m roseinfer.benchmark_scheduler --model smollm2 --device cpu --prompt "Hello" --num-requests 8 \
      --max-new-tokens 8 --mode online --warmup-runs 0 --repeat-runs 1; stamp; } 2>&1 | tee "$OUT/scheduler_seed_online.txt"
  quiet; { stamp; $PY -m roseinfer.benchmark_scheduler --model smollm2 --device cpu --prompt "Hello" --num-requests 8 \
      --max-new-tokens 8 --mode offline --warmup-runs 0 --repeat-runs 1; stamp; } 2>&1 | tee "$OUT/scheduler_seed_offline.txt"
  # ...one stream (batch 1: 64 tokens after a 64-token prompt)...
  quiet; { stamp; $PY -m roseinfer.benchmark_scheduler --model smollm2 --random-input-len 64 --num-requests 1 \
      --max-new-tokens 64 --ignore-eos --mode online --warmup-runs 1 --repeat-runs 3; stamp; } 2>&1 \
      | tee "$OUT/scheduler_single.txt"
  # ...and a larger warm one: 32 random 64-token prompts, 64 tokens each, with the step trace.
  quiet; { stamp; $PY -m roseinfer.benchmark_scheduler --model smollm2 --random-input-len 64 --num-requests 32 \
      --max-new-tokens 64 --ignore-eos --mode online --warmup-runs 1 --repeat-runs 3 \
      --json "$OUT/scheduler_online.json" --trace "$OUT/scheduler_online_trace.png"; stamp; } 2>&1 \
      | tee "$OUT/scheduler_online.txt"
fi

if [[ $what == all || $what == throughput ]]; then
  # 2. Offline throughput (nano-vllm's protocol scaled: 64 seqs, input 32-256, output 32-128, seed 0)
  #    against transformers generate on the same workload, then the step trace of the same run.
  quiet; { stamp; $PY benchmarks/hf_baseline.py --model smollm2 --dtype bfloat16 --batch-size 32 --no-progress \
      --json "$OUT/hf_baseline.json"; stamp; } 2>&1 | tee "$OUT/hf_baseline.txt"
  # The transformers side alone at other batch sizes (is 32 its best?), and both engines in float32.
  for bs in 16 64; do
    quiet; { stamp; $PY benchmarks/hf_baseline.py --model smollm2 --dtype bfloat16 --batch-size $bs --skip-roseinfer \
        --no-progress --json "$OUT/hf_baseline_bs$bs.json"; stamp; } 2>&1 | tee "$OUT/hf_baseline_bs$bs.txt"
  done
  quiet; { stamp; $PY benchmarks/hf_baseline.py --model smollm2 --dtype float32 --batch-size 32 --no-progress \
      --json "$OUT/hf_baseline_fp32.json"; stamp; } 2>&1 | tee "$OUT/hf_baseline_fp32.txt"
  quiet; { stamp; $PY -m roseinfer.cli bench throughput --model smollm2 --max-num-seqs 32 --no-progress \
      --json "$OUT/throughput_seqs32.json"; stamp; } 2>&1 | tee "$OUT/throughput_seqs32.txt"
  quiet; { stamp; $PY -m roseinfer.cli bench throughput --model smollm2 --no-progress --json "$OUT/throughput.json" \
      --trace "$OUT/throughput_trace.png"; stamp; } 2>&1 | tee "$OUT/throughput.txt"
fi

# One serving sweep: our server on 127.0.0.1 with "$2" (server flags), ~70-token prompts, 128
# output tokens, ignore_eos, at concurrencies "$3" with "$4" requests each; logs as $OUT/$1.*,
# plus any extra `bench serve` flags after that.
serve_sweep() {
  local name=$1 flags=$2 concurrency=$3 prompts=$4
  shift 4
  # shellcheck disable=SC2086  # the flags are words
  $PY -m roseinfer.server --model smollm2 $flags --port "$PORT" --log-level warning \
      > "${TMPDIR:-/tmp}/roseinfer_bench_$name.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true; probe' EXIT
  for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && break
    sleep 1
  done
  quiet; { stamp; $PY -m roseinfer.cli bench serve --base-url "http://127.0.0.1:$PORT/v1" --random-input-len 70 \
      --random-output-len 128 --concurrency "$concurrency" --num-prompts "$prompts" --no-progress \
      --server-pid "$server" --json "$OUT/$name.json" "$@"; stamp; } 2>&1 | tee "$OUT/$name.txt"
  kill $server
  wait $server 2>/dev/null || true
  trap probe EXIT
}

if [[ $what == all || $what == serve ]]; then
  # 3. The serving sweep; 4. the same against --quantization int8 (the single-stream latency
  # target); 5. int8 weights and the int8 KV cache (the fastest mode at 32 streams).
  serve_sweep serve_sweep "" 1,4,8,16,32 8,16,64,32,64 --plot "$OUT/serve_sweep.png"
  serve_sweep serve_sweep_int8 "--quantization int8" 1,8,32 8,64,64
  serve_sweep serve_sweep_int8_kv "--quantization int8 --kv-cache-dtype int8" 1,8,32 8,64,64
fi
