#!/usr/bin/env bash
# shared_prefix_steps.py in a base tree and this one, alternated, ROUNDS rounds.
#   BASE=/work/wt-base [ROUNDS=2] [MODES=fp32,int8+kv8] docs/bench/session14/ab_shared_prefix.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
py=${PYTHON:-$here/.venv/bin/python}
for r in $(seq "${ROUNDS:-2}"); do
  for tree in "$BASE" "$here"; do
    tag=$([ "$tree" = "$BASE" ] && echo before || echo after)
    PYTHONPATH=$tree "$py" "$here/docs/bench/session14/shared_prefix_steps.py" "$tag" 2 \
      2>&1 | grep -v Loading
  done
done
