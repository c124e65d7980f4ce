#!/bin/sh
# Session 33's GPU machine (its CPU, as in sessions 26 and 31: an Intel Xeon with AMX, 16 cores):
# the prefill kernel's tests on real AMX after session 32's softmax; its AMX tile timed against
# BASE (c5bde01, before session 32) in alternating processes; then, on 2 threads as CI's hosts
# have (`taskset -c 0,1`, the load client on the same two cores, as on a 2-core host), one
# stream against the weight-read floor and issue 22's served cases, with SmolLM2's shapes and
# tokenizer and random bf16 weights (smol_shaped.py: the GGUF cannot travel).
#   .base: `git archive c5bde01 roseinfer benchmarks tests/conftest.py | tar -x -C .base`
#   .smoltok: session 25's tokenizer files (smol_shaped.py)
#   run(command="sh docs/bench/session33/device_check.sh", carry=[".whl", ".smoltok", ".base"], timeout_s=520)
# The first call's servers did not start (fastapi 0.165 imports opentelemetry-api, which the image
# lacks; its wheel now travels in .whl too); the second call ran the served part alone, then one
# stream again:
#   run(command="sh docs/bench/session33/device_check.sh served", carry=[".whl", ".smoltok"], timeout_s=420)
part=${1:-all}
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=8
here=$PWD
{
  date -u '+%F %H:%M:%S UTC'
  lscpu | grep -E "Model name|^CPU\(s\)|^Model:|^CPU family"
  lscpu | grep -o -E "amx[a-z_0-9]*|avx512_bf16|avx512_vnni" | sort -u | tr '\n' ' '; echo
  python3 -c "import torch; print('torch', torch.__version__)"
} 2>&1 | tee "$out/machine.txt"
build() {  # tree
  (cd "$1" && PYTHONPATH="/tmp/site:$1" python3 -c "
import time; t0 = time.time()
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
print('$1: C++ kernels built in %.0f s' % (time.time() - t0), k is not None)")
}
export PYTHONPATH="/tmp/site:$here"
if [ "$part" = served ]; then
  MAX_JOBS=16 build "$here" 2>&1 | tail -2 | tee "$out/build.txt"
else
{ build "$here" & build "$here/.base" & wait; } 2>&1 | tail -4 | tee "$out/build.txt"
timeout 90 python3 -m pytest -q -x --tb=short -p no:cacheprovider tests/test_kernels.py \
  -k "prefill" 2>&1 | tail -15 > "$out/prefill_tests.txt"
shapes=1x512@2000,16x32@1024,1x64@2000,1x2000@2000
pa() {  # label tree tiles
  printf "%s %s\n" "$(date -u +%H:%M:%S)" "$1"
  (cd "$2" && PYTHONPATH="/tmp/site:$2" OMP_NUM_THREADS=2 timeout 60 taskset -c 0,1 python3 \
    benchmarks/prefill_attention.py --shapes $shapes --dtype bfloat16 --repeats 3 --tiles "$3" 2>&1)
}
for r in 1 2; do
  pa "BASE c5bde01" "$here/.base" amx
  pa "session 32 (HEAD)" "$here" amx
done 2>&1 | tee "$out/prefill_attention_ab.txt"
fi
one_stream() {  # file
  OMP_NUM_THREADS=2 timeout 70 taskset -c 0,1 python3 benchmarks/one_stream.py --rounds 60 \
    --model /tmp/smolfull 2>&1 | grep -v -i "loading" | tail -5 | tee "$out/$1"
}
timeout 40 python3 docs/bench/session33/smol_shaped.py .smoltok /tmp/smolfull > /dev/null 2>&1
[ "$part" = served ] || one_stream one_stream.txt
PORT=8801
bench() {  # label case args...
  label=$1 case=$2; shift 2
  OMP_NUM_THREADS=2 timeout 60 taskset -c 0,1 python3 -m roseinfer.cli bench serve \
    --base-url http://127.0.0.1:$PORT/v1 --tokenizer /tmp/smolfull --no-progress "$@" \
    > "/tmp/${label}_$case.txt" 2>&1
  printf "%s %-10s %-14s " "$(date -u +%H:%M:%S)" "$label" "$case"
  awk -F: '/Output token throughput/{o=$2} /Median TTFT/{m=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
    END{gsub(/ /,"",o);gsub(/ /,"",m);gsub(/ /,"",t);gsub(/ /,"",f);
    printf "out tok/s %s, TTFT p50 %s ms, TPOT p50 %s ms, failed %s\n",o,m,t,f}' "/tmp/${label}_$case.txt"
}
for run in rose_bf16 rose_int8_kv8; do
  flags=""; [ $run = rose_int8_kv8 ] && flags="--quantization int8 --kv-cache-dtype int8"
  OMP_NUM_THREADS=2 taskset -c 0,1 python3 -m roseinfer.server --model /tmp/smolfull \
    --port $PORT $flags > "/tmp/server_$run.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 90); do
    curl -sf http://127.0.0.1:$PORT/health >/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 1
  done
  curl -s http://127.0.0.1:$PORT/v1/completions -H 'Content-Type: application/json' \
    -d '{"model":"smolfull","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
  bench $run one --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed 2
  bench $run short --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed 1
  bench $run long-prompt --preset long-prompt --seed 3
  bench $run long-prompt-8 --preset long-prompt-8 --seed 4
  bench $run shared-prefix --preset shared-prefix --seed 3
  kill $pid; wait $pid 2>/dev/null
done 2>&1 | tee "$out/served.txt"
tail -3 /tmp/server_rose_bf16.log > "$out/server_tail.txt"
[ "$part" = served ] && one_stream one_stream2.txt
