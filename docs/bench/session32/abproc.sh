#!/bin/bash
# Trees timed in alternating processes: abproc.sh ROUNDS REPS OUT, with TREES="BASE_WORKTREE /work/main"
# (each line: the tree's folder name, then one.py's figures). ab_final.txt named the trees
# "base" and "new", ab_final2.txt "base" and "main".
for r in $(seq 1 $1); do
  for tree in ${TREES:-/tmp/s32/base /work/main}; do
    echo "$(basename $tree) $(cd $tree && PYTHONPATH=. /work/main/.venv/bin/python /work/main/docs/bench/session32/one.py $2)" | tee -a $3
  done
done
