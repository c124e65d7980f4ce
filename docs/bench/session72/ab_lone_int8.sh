#!/bin/bash
# a ~2,000-token prompt alone in int8 + int8 KV (session 69's lone_chunks.py, 8 rounds a
# process), /tmp/prev's worktree (this session's BASE) and this checkout in turns
for i in 1 2 3; do
  for rev in prev main; do
    dir=/tmp/prev; [ $rev = main ] && dir=/work/main
    echo "$rev $(cd $dir && PYTHONPATH=$dir /work/main/.venv/bin/python /work/main/docs/bench/session69/lone_chunks.py int8 8 2048 2>&1 | grep lone_prefill)"
  done
done
