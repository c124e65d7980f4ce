#!/bin/sh
# Session 35's third call on the GPU machine's Xeon (AMX), at `4ab2393` (VNNI_ROWS_ON_AMX = 12):
# the kernels' and layers' tests on AMX (16 threads); then, on 2 threads (`taskset -c 0,1`, the
# load client on the same cores, as on a 2-core host), issue 22's served cases for int8 weights
# with the int8 cache, two servers side by side in turns, case by case: "with" (as built) and
# "without" (VNNI_ROWS_ON_AMX set to 0 before the server builds its engine: `amx_int8_linear`
# at every row count, as before), on session 33's SmolLM2-shaped random model.
#   run(command="sh docs/bench/session35/device_check3.sh", carry=[".whl", ".smoltok"], timeout_s=420)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PYTHONPATH="/tmp/site:$PWD"
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=16
{ date -u '+%F %H:%M:%S UTC'; lscpu | grep -E "Model name|^CPU\(s\)|^Model:"; } | tee "$out/machine.txt"
python3 -c "
import time; t0 = time.time()
from roseinfer.kernels import load_cpu_kernels
print('C++ kernels built in %.0f s' % (time.time() - t0), load_cpu_kernels() is not None)
" 2>&1 | tail -2 | tee "$out/build.txt"
OMP_NUM_THREADS=4 timeout 60 taskset -c 8-11 python3 docs/bench/session33/smol_shaped.py .smoltok /tmp/smolfull > /dev/null 2>&1 &
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py tests/test_gated_linear.py \
  tests/test_kernel_out.py tests/test_huge_pages.py tests/test_decode_stack.py tests/test_backends.py \
  2>&1 | tail -8 | tee "$out/tests.txt"
wait
two() { OMP_NUM_THREADS=2 taskset -c 0,1 "$@"; }
serve() {  # port rows
  two python3 -c "import runpy; from roseinfer.backends import cpu_linear
cpu_linear.VNNI_ROWS_ON_AMX = $2 if $2 >= 0 else cpu_linear.VNNI_ROWS_ON_AMX
runpy.run_module('roseinfer.server', run_name='__main__', alter_sys=True)" \
    --model /tmp/smolfull --port $1 --quantization int8 --kv-cache-dtype int8 \
    > "/tmp/server_$1.log" 2>&1 &
}
serve 8801 -1; serve 8802 0
for port in 8801 8802; do
  for _ in $(seq 1 120); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 1; done
  curl -s http://127.0.0.1:$port/v1/completions -H 'Content-Type: application/json' \
    -d '{"model":"smolfull","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
done
bench() {  # label port case args...
  label=$1 port=$2 case=$3; shift 3
  two timeout 80 python3 -m roseinfer.cli bench serve --base-url http://127.0.0.1:$port/v1 \
    --tokenizer /tmp/smolfull --no-progress "$@" > "/tmp/${label}_$case.txt" 2>&1
  printf "%s %-8s %-14s " "$(date -u +%H:%M:%S)" "$label" "$case"
  awk -F: '/Output token throughput/{o=$2} /Median TTFT/{m=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
    END{gsub(/ /,"",o);gsub(/ /,"",m);gsub(/ /,"",t);gsub(/ /,"",f);
    printf "out tok/s %s, TTFT p50 %s ms, TPOT p50 %s ms, failed %s\n",o,m,t,f}' "/tmp/${label}_$case.txt"
}
both() {  # case args...
  bench with 8801 "$@"; bench without 8802 "$@"
}
{
  both one --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed 2
  both one --random-input-len 70 --random-output-len 128 --concurrency 1 --num-prompts 8 --seed 5
  both eight --random-input-len 70 --random-output-len 128 --concurrency 8 --num-prompts 24 --seed 6
  both long-prompt --preset long-prompt --seed 3
  both short --random-input-len 70 --random-output-len 128 --concurrency 32 --num-prompts 128 --seed 1
} 2>&1 | tee "$out/served_ab.txt"
tail -n 2 /tmp/server_8801.log /tmp/server_8802.log > "$out/server_tail.txt"
