#!/bin/bash
# a ~2,000-token prompt alone (lone_chunks.py, 8 rounds a process), HEAD's worktree (/tmp/prev)
# and this checkout in turns, bf16 and int8 + int8 KV
for i in 1 2 3; do
  for q in bf16 int8; do
    for rev in prev main; do
      dir=/tmp/prev; [ $rev = main ] && dir=/work/main
      echo "$rev $(cd $dir && PYTHONPATH=$dir /work/main/.venv/bin/python /work/main/docs/bench/session69/lone_chunks.py $q 8 2048 2>&1 | grep lone_prefill)"
    done
  done
done
