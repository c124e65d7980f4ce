#!/bin/sh
# One stream's C++ decoder stack split by op (session 20): a worktree of HEAD with
# decode_stack_timers.patch applied, fp32 / bf16 / int8 weights in turns, ROUNDS times.
#   sh docs/bench/session20/one_stream_ops.sh [ROUNDS]
set -e
ROOT=$(git rev-parse --show-toplevel)
WT=$(mktemp -d /tmp/one_stream_ops.XXXXXX)
git -C "$ROOT" worktree add -q --detach "$WT" HEAD
trap 'git -C "$ROOT" worktree remove --force "$WT"' EXIT
git -C "$WT" apply "$ROOT/docs/bench/session20/decode_stack_timers.patch"
ln -s "$ROOT/.venv" "$WT/.venv"
cd "$WT"
echo "# $(date -u '+%F %H:%M UTC'), $(git -C "$ROOT" rev-parse --short HEAD) + decode_stack_timers.patch, $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "${1:-2}"); do
  for mode in int8 bf16 fp32; do
    PYTHONPATH=. .venv/bin/python "$ROOT/docs/bench/session20/one_stream_ops.py" $mode 200 2 2>&1 | grep -v Loading
  done
done
