#!/bin/sh
# decode_steps.py in BASE (a worktree of the commit before) and in this tree, alternated.
# BASE=/work/wt-base [ROUNDS=2] [BATCHES=1,32] [CONTEXTS=70,500] docs/bench/session13/ab_steps.sh
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "${ROUNDS:-2}"); do
  for t in base new; do
    d=$here; [ $t = base ] && d=$BASE
    (cd "$d" && PYTHONPATH=$d "$here/.venv/bin/python" "$here/docs/bench/session13/decode_steps.py" \
      "$t r$r" "${BATCHES:-1,32}" "${CONTEXTS:-70,500}" 2>/dev/null | grep batch)
  done
done
