#!/usr/bin/env bash
# The served short case (int8 + int8 KV cache, 32 streams of 128 tokens, 128 requests) with the
# engine steps timed (served_steps.py) and each server thread's CPU, migrations and context
# switches; LOOP/HTTP override uvicorn_config's loop and parser; the round-trip probe (rt: ~80-130
# ns one CCD, ~370-420 two) first.
set -u
cd "$(dirname "$0")/../../../.."
OUT=${OUT:-/tmp/served_steps}; mkdir -p "$OUT"
RT=${RT:-/tmp/rt.so}; [ -e "$RT" ] || gcc -O2 -shared -fPIC -pthread -o "$RT" docs/bench/session45/rt.c
PY=.venv/bin/python; PORT=8811
curl -sf http://127.0.0.1:$PORT/health >/dev/null && { echo "port taken"; exit 1; }
PYTHONPATH=. $PY ${SCRIPT:-$PWD/docs/bench/session49/uvloop/served_steps.py} --model smollm2 --port $PORT --quantization int8 --kv-cache-dtype int8 --log-stats-interval 0 ${SERVER_ARGS:-} > $OUT/srv.log 2>&1 &
pid=$!
for _ in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.5; done
curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' -d '{"model":"x","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
echo "rt $($PY -c "import ctypes;rt=ctypes.CDLL('$RT');rt.round_trip_ns.restype=ctypes.c_double;print(round(rt.round_trip_ns(2000)))")"
snap() { for t in /proc/$pid/task/*; do printf "%s %s %s %s %s %s\n" $(basename $t) $(cat $t/comm | tr ' ' _) $(awk '/sum_exec_runtime/{print $3} /nr_migrations/{print $3} /nr_voluntary_switches/{print $3} /nr_involuntary_switches/{print $3}' $t/sched); done; }
snap > $OUT/before.txt
$PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed ${SEED:-1} 2>&1 | grep -E "Output token|Median TPOT|Median TTFT"
snap > $OUT/after.txt
join <(sort $OUT/before.txt) <(sort $OUT/after.txt) | awk '{c=($8-$3)/1000; if (c>0.05) printf "  %s cpu %.2f s, migrations %d, voluntary %d, involuntary %d\n", $2, c, $9-$4, $10-$5, $11-$6}'
kill -TERM $pid; wait $pid 2>/dev/null
grep -E "^steps|span" $OUT/srv.log
