#!/usr/bin/env bash
# Served, in turns, a fresh server each: issue 22's long-prompt-8 preset (16 ~2,000-token
# prompts, 8 in flight, 32 tokens each), bf16, --lone-prefill-tokens 0 against 2048.
#   ROUNDS=3 bash docs/bench/session69/grow_served8.sh
cd "$(dirname "$0")/../../.." || exit 1
for r in $(seq "${ROUNDS:-3}"); do
  for lone in 0 2048; do
    .venv/bin/python -m roseinfer.server --model smollm2 --host 127.0.0.1 --port 8801 \
      --lone-prefill-tokens $lone > /tmp/grow_served8.log 2>&1 &
    pid=$!
    for _ in $(seq 120); do curl -sf http://127.0.0.1:8801/health >/dev/null && break; sleep 1; done
    printf "round %s lone %s: " "$r" "$lone"
    .venv/bin/python -m roseinfer.cli bench serve --base-url http://127.0.0.1:8801/v1 --no-progress \
      --preset long-prompt-8 --seed 4 2>&1 | awk -F: '/Output token throughput/{o=$2} /Mean TTFT/{a=$2}
      /Median TTFT/{m=$2} /P99 ITL/{i=$2} END{gsub(/ /,"",o);gsub(/ /,"",a);gsub(/ /,"",m);gsub(/ /,"",i);
      printf "out tok/s %s, TTFT mean %s p50 %s ms, ITL p99 %s ms\n",o,a,m,i}'
    kill $pid; wait $pid 2>/dev/null; sleep 2
  done
done
