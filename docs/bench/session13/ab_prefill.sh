#!/bin/sh
# prefill_steps.py in BASE (a worktree of the commit before) and in this tree, alternated.
# BASE=/work/wt-base [ROUNDS=2] docs/bench/session13/ab_prefill.sh
here=$(cd "$(dirname "$0")/../../.." && pwd)
for r in $(seq "${ROUNDS:-2}"); do
  for t in base new; do
    d=$here; [ $t = base ] && d=$BASE
    (cd "$d" && PYTHONPATH=$d "$here/.venv/bin/python" "$here/docs/bench/session13/prefill_steps.py" \
      "$t r$r" 2>/dev/null | grep "first token")
  done
done
