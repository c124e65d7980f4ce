#!/bin/bash
# sixteen_parts.py bf16 in turns: HEAD's worktree (/tmp/prev) and this checkout
for i in 1 2; do
  for rev in prev main; do
    dir=/tmp/prev; [ $rev = main ] && dir=/work/main
    echo "== $rev round $i $(date -u +%H:%M:%S)"
    (cd $dir && PYTHONPATH=$dir /work/main/.venv/bin/python /work/main/docs/bench/session69/sixteen_parts.py bf16 2>&1 | grep -v "Loading\|holds" | head -9)
  done
done
