# CPU seconds the disturber used over 20 s alone, and beside a two-thread engine loop
PY=$PWD/.venv/bin/python
taskset -c 1 $PY docs/bench/session36/disturb_ab.py 20 & d=$!; sleep 19.5; echo "alone: $(awk '{print ($14+$15)/100}' /proc/$d/stat) s of 20 (half of it in disturbed windows)"; wait $d
taskset -c 1 $PY docs/bench/session36/disturb_ab.py 20 & d=$!
PYTHONPATH=. timeout 19 $PY - <<'PY' &
import sys, time
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
eng = InferenceEngine(model="smollm2", quantization="int8")
core = decoding_core(eng, 32, context=70, kv_cache_dtype="int8", max_new_tokens=1100)
while True: core.step()
PY
sleep 19.5; echo "beside the engine: $(awk '{print ($14+$15)/100}' /proc/$d/stat) s of 20"; wait
