#!/bin/bash
# a ~2,000-token prompt alone in bf16 (lone_chunks.py, 8 rounds a process), /tmp/prev's worktree
# and this checkout in turns
for i in 1 2 3 4; do
  for rev in prev main; do
    dir=/tmp/prev; [ $rev = main ] && dir=/work/main
    echo "$rev $(cd $dir && PYTHONPATH=$dir /work/main/.venv/bin/python /work/main/docs/bench/session69/lone_chunks.py bf16 8 2048 2>&1 | grep lone_prefill)"
  done
done
