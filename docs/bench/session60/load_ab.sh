#!/usr/bin/env bash
# The default model's files read (weights, sampling defaults, tokenizer: `read_source`) at two
# revisions in turn, 4 rounds each, the second read of each process timed (the first warms the
# page cache and imports). Run from the repository root: bash docs/bench/session60/load_ab.sh A B
set -euo pipefail
A=${1:-8477f80~1}; B=${2:-8477f80}
ROOT=$(pwd); WORK=$(mktemp -d)
for rev in "$A" "$B"; do git worktree add -q --detach "$WORK/$rev" "$rev"; done
for round in 1 2 3 4; do
  for rev in "$A" "$B"; do
    (cd "$WORK/$rev" && PYTHONPATH=. "$ROOT/.venv/bin/python" -c "
import time
from roseinfer.config import EngineConfig
from roseinfer.loader import read_source
read_source(EngineConfig())
t = time.perf_counter(); read_source(EngineConfig())
print('$rev', 'read_source', round(time.perf_counter() - t, 3), 's')")
  done
done
for rev in "$A" "$B"; do git worktree remove --force "$WORK/$rev"; done
