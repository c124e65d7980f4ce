#!/bin/bash
# Served, issue 22's long-prompt presets (docs/bench/session25/peers_here.sh): vLLM 0.32 once,
# then this tree's bf16 server with --lone-prefill-tokens 0 (the plain 512-token chunks) and with
# its default (2048) in turns, PAIRS times, each run in its own folder under OUT.
#   WORK=/tmp/s66/i22 OUT=docs/bench/session66/lone_ab PAIRS=2 bash docs/bench/session66/lone_ab.sh
set -u
HERE=$(cd "$(dirname "$0")/../../.." && pwd)
PEERS="$HERE/docs/bench/session25/peers_here.sh"
CASES="long-prompt long-prompt-8"
export VLLM_PY=$WORK/vllmenv/bin/python HF=$WORK/hf_fp32 CASES
OUT_ROOT=$OUT
OUT=$OUT_ROOT/vllm RUNS=vllm_bf16 bash "$PEERS"
for i in $(seq "${PAIRS:-2}"); do
  OUT=$OUT_ROOT/lone0_$i RUNS=rose_bf16 ROSE_ARGS="--lone-prefill-tokens 0" bash "$PEERS"
  OUT=$OUT_ROOT/lone2048_$i RUNS=rose_bf16 ROSE_ARGS="" bash "$PEERS"
done
