#!/bin/bash
# A victim beside each probe of session 48's field audit (a helper's, in ../audit/, the server's address from BASE),
# against a server of TREE (PYTHONPATH) serving session 47's 2-layer model on PORT.
#   TREE=/path/to/tree PORT=18501 bash run.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=/work/main/.venv/bin/python
cd /tmp  # not a checkout: `python -m` puts the working directory first on sys.path
PYTHONPATH=$TREE nohup $py -m roseinfer.server --model /tmp/s47/audit/tinysmol --port $PORT --dtype float32 --num-kv-blocks 2048 > /tmp/s48/victims_$PORT.log 2>&1 &
pid=$!
for i in $(seq 120); do curl -sf localhost:$PORT/health >/dev/null && break; sleep 1; done
export BASE=http://127.0.0.1:$PORT
echo "== $TREE ($(git -C $TREE rev-parse --short HEAD)) $(date -u +%H:%M:%S)"
curl -s localhost:$PORT/version; echo
for probe in "p_stopdos.py 150 30000 within" "p_perstep_dos.py allowed_dup 32 10" "p_perstep_dos.py bias 32 10" \
             "p_perstep_dos.py stopids_min 32 10" "p_badwords_dos.py 20000 32 20"; do
  echo "-- $probe"; timeout 300 $py $here/../audit/$probe
done
echo "-- big_response.py 16 400 300"; AUDIT_PORT=$PORT timeout 300 $py $here/big_response.py $PORT 16 400 300
kill $pid; sleep 2
