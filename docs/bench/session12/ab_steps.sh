#!/bin/sh
# decode_steps.py in BASE (a worktree of the commit before) and in this tree, alternated.
# BASE=/work/wt-base [ROUNDS=2] [BATCHES=1,8,32] docs/bench/session12/ab_steps.sh > out.txt
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "${ROUNDS:-2}"); do
  for t in base new; do
    d=$here; [ $t = base ] && d=$BASE
    (cd "$d" && PYTHONPATH=$d "$here/.venv/bin/python" "$here/docs/bench/session12/decode_steps.py" \
      "$t r$r" "${BATCHES:-1,8,32}" 2>/dev/null | grep batch)
  done
done
