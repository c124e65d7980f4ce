#!/usr/bin/env bash
# llama.cpp's native /completion against /v1/completions on one server (SmolLM2, its default
# dtype), streamed, the same workload (each run its own prompts: the prefix cache would serve a
# repeat), alternated, the order swapped in the second round: what the native framing costs.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
PORT=${PORT:-8971}
OUT=${OUT:-docs/bench/session54/native_ab}
.venv/bin/roseinfer serve --port "$PORT" --log-level warning & SERVER=$!
trap 'kill $SERVER' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 1; done
seed=0
for order in "completions llamacpp" "llamacpp completions"; do
  round=$((seed / 2 + 1))
  for kind in $order; do
    seed=$((seed + 1))
    .venv/bin/roseinfer bench serve --base-url "http://127.0.0.1:$PORT/v1" --endpoint-type "$kind" \
      --num-prompts 48 --random-input-len 64 --random-output-len 64 --concurrency 8 \
      --seed "$seed" --server-pid "$SERVER" --no-progress --json "$OUT/$kind.$round.json" \
      | tee "$OUT/$kind.$round.txt" | grep -E "Output token throughput|Mean TTFT|Mean TPOT|Successful" || true
  done
done
