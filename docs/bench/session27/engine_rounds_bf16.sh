# Alternating processes: 1c7d63c (dpbf16 tile after tile) in /tmp/s27/wt and the working tree
for i in 1 2 3; do
  echo "round $i, before (1c7d63c):"; (cd /tmp/s27/wt && PYTHONPATH=. /work/main/.venv/bin/python /work/main/benchmarks/one_stream.py --rounds 60 2>&1 | grep "^read\|^bf16")
  echo "round $i, after:"; (cd /work/main && PYTHONPATH=. .venv/bin/python benchmarks/one_stream.py --rounds 60 2>&1 | grep "^read\|^bf16")
done
for i in 1 2 3; do
  a=$(cd /tmp/s27/wt && PYTHONPATH=. /work/main/.venv/bin/python /work/main/docs/bench/session27/one_engine.py bf16 32 100 2>/dev/null | tail -1)
  b=$(cd /work/main && PYTHONPATH=. .venv/bin/python docs/bench/session27/one_engine.py bf16 32 100 2>/dev/null | tail -1)
  echo "bf16 batch 32 round $i: before $a ms, after $b ms"
done
