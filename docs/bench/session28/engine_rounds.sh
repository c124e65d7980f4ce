# Alternating processes: the session's start (ce99371) in /tmp/s28/base and the working tree.
#   git worktree add /tmp/s28/base ce99371; bash docs/bench/session28/engine_rounds.sh
for i in 1 2 3; do
  echo "round $i, before (ce99371):"; (cd /tmp/s28/base && PYTHONPATH=. /work/main/.venv/bin/python /work/main/benchmarks/one_stream.py --rounds 60 2>&1 | grep -v Loading)
  echo "round $i, after:"; (cd /work/main && PYTHONPATH=. .venv/bin/python benchmarks/one_stream.py --rounds 60 2>&1 | grep -v Loading)
done
for mode in int8 bf16; do
  for i in 1 2; do
    a=$(cd /tmp/s28/base && PYTHONPATH=. /work/main/.venv/bin/python /work/main/docs/bench/session28/one_engine.py $mode 32 100 2>/dev/null | tail -1)
    b=$(cd /work/main && PYTHONPATH=. .venv/bin/python /work/main/docs/bench/session28/one_engine.py $mode 32 100 2>/dev/null | tail -1)
    echo "$mode batch 32 round $i: before $a ms, after $b ms"
  done
done
