#!/usr/bin/env bash
# Served, roseinfer bf16 only, --max-num-batched-tokens 512 (the default), 1024 and 2048 in turns:
# 8 ~2,000-token prompts at once (long-prompt-8) and 32 short streams (short), the client and
# cases of docs/bench/session25/peers_here.sh; ROUNDS rounds.
#   ROUNDS=2 bash docs/bench/session67/budget.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq ${ROUNDS:-2}); do
  for b in 512 1024 2048; do
    OUT=$HERE/docs/bench/session67/budget/r$r-b$b ROSE_ARGS="--max-num-batched-tokens $b" \
      RUNS="rose_bf16" CASES="long-prompt-8 short" bash "$HERE/docs/bench/session25/peers_here.sh" |
      grep -v "^#" | sed "s/^/budget $b: /"
  done
done
