#!/usr/bin/env bash
# Served, in turns: the long prompt's chunk grown to --lone-prefill-tokens (2048, the default)
# against every step within the 512-token budget (--lone-prefill-tokens 0), bf16 and int8 +
# int8 KV, with session 25's client script (issue 22's presets).
#   ROUNDS=2 OUT=docs/bench/session69/grow_served bash docs/bench/session69/grow_served.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-/tmp/grow_served}
for r in $(seq "${ROUNDS:-2}"); do
  order="0 2048"
  [ $((r % 2)) = 0 ] && order="2048 0"
  for lone in $order; do
    ROSE_ARGS="--lone-prefill-tokens $lone" OUT="$OUT/lone${lone}_$r" RUNS="rose_bf16 rose_int8_kv8" \
      CASES="short long-prompt-8 shared-prefix" bash "$HERE/docs/bench/session25/peers_here.sh" \
      | sed "s/^/lone $lone round $r: /"
  done
done
