#!/usr/bin/env bash
# One stream served (bf16 default, or SERVER_ARGS), one request at a time (8 x 70-token prompts, 128 tokens), with
# the engine thread's phases timed (phases.py) and each server thread's CPU, migrations and context
# switches; LOOP/HTTP override uvicorn_config's loop and parser; the round-trip probe (rt: ~80-130
# ns one CCD, ~370-420 two) first.
set -u
cd /work/main
OUT=${OUT:-/tmp/served_steps}; mkdir -p "$OUT"
RT=${RT:-/tmp/rt.so}; [ -e "$RT" ] || gcc -O2 -shared -fPIC -pthread -o "$RT" docs/bench/session45/rt.c
PY=.venv/bin/python; PORT=8811
curl -sf http://127.0.0.1:$PORT/health >/dev/null && { echo "port taken"; exit 1; }
PYTHONPATH=. $PY ${SCRIPT:-$PWD/docs/bench/session50/one_stream_served/phases.py} --model smollm2 --port $PORT --log-stats-interval 0 ${SERVER_ARGS:-} > $OUT/srv.log 2>&1 &
pid=$!
for _ in $(seq 1 200); do curl -sf http://127.0.0.1:$PORT/health >/dev/null && break; sleep 0.5; done
curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' -d '{"model":"x","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
echo "rt $($PY -c "import ctypes;rt=ctypes.CDLL('$RT');rt.round_trip_ns.restype=ctypes.c_double;print(round(rt.round_trip_ns(2000)))")"
snap() { for t in /proc/$pid/task/*; do printf "%s %s %s %s %s %s\n" $(basename $t) $(cat $t/comm | tr ' ' _) $(awk '/sum_exec_runtime/{print $3} /nr_migrations/{print $3} /nr_voluntary_switches/{print $3} /nr_involuntary_switches/{print $3}' $t/sched); done; }
snap > $OUT/before.txt
$PY -m roseinfer.cli bench serve --base-url http://127.0.0.1:$PORT/v1 --no-progress --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed ${SEED:-1} 2>&1 | grep -E "Output token|Median TPOT|Median TTFT"
snap > $OUT/after.txt
join <(sort $OUT/before.txt) <(sort $OUT/after.txt) | awk '{c=($8-$3)/1000; if (c>0.05) printf "  %s cpu %.2f s, migrations %d, voluntary %d, involuntary %d\n", $2, c, $9-$4, $10-$5, $11-$6}'
kill -TERM $pid; wait $pid 2>/dev/null
grep -E "^steps|span" $OUT/srv.log
