# roseinfer bench throughput (bf16, the default workload), processes in turns: before in a scratch worktree of 1c7d63c at /tmp/s27/wt, after in the tree
for i in 1 2 3; do
  a=$(cd /tmp/s27/wt && PYTHONPATH=. /work/main/.venv/bin/python -m roseinfer.cli bench throughput --dtype bfloat16 --no-progress 2>&1 | grep -i "tok/s" | tr "\n" " ")
  b=$(cd /work/main && PYTHONPATH=. .venv/bin/python -m roseinfer.cli bench throughput --dtype bfloat16 --no-progress 2>&1 | grep -i "tok/s" | tr "\n" " ")
  echo "round $i before: $a"; echo "round $i after:  $b"
done
