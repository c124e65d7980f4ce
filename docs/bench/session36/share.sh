# engine alone and served in turns, with the served threads' CPU seconds
PY=$PWD/.venv/bin/python; PORT=8813
for r in 1 2; do
  $PY -m roseinfer.cli bench throughput --model smollm2 --quantization int8 --kv-cache-dtype int8 --num-seqs 128 --min-input-len 70 --max-input-len 70 --min-output-len 128 --max-output-len 128 --max-num-seqs 32 2>&1 | grep "Output token" | sed "s/^/alone: /"
  $PY -m roseinfer.server --model smollm2 --port $PORT --quantization int8 --kv-cache-dtype int8 > /tmp/share_server.log 2>&1 & pid=$!
  for _ in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.5; done
  curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' -d '{"model":"x","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
  before=$(for t in $(ls /proc/$pid/task | sort -n); do awk '{printf "%d ", $14+$15}' /proc/$pid/task/$t/stat; done)
  $PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --seed $r --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 > /tmp/share_$r.txt 2>&1
  after=$(for t in $(ls /proc/$pid/task | sort -n); do awk '{printf "%d ", $14+$15}' /proc/$pid/task/$t/stat; done)
  grep -E "Output token|Benchmark duration" /tmp/share_$r.txt | sed "s/^/served: /"
  echo "ticks before: $before"; echo "ticks after:  $after"
  kill $pid; wait $pid 2>/dev/null
done
