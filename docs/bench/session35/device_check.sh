#!/bin/sh
# Session 35's GPU machine (its CPU, as in sessions 26, 31 and 33: an Intel Xeon with AMX, 16
# cores), on 2 threads as CI's hosts have (`OMP_NUM_THREADS=2 taskset -c 0,1`): BENCHMARKS.md's
# "What's next" 0, the int8 linears at a few rows, `amx_int8_linear` against `vnni_int8_linear`
# (`benchmarks/small_batch_linear.py`), then one stream with both in one process
# (`vnni_one_stream.py`) at 70 and 2,000 keys, on SmolLM2's shapes with random bf16 weights
# (session 33's `smol_shaped.py`: the GGUF cannot travel; `.smoltok` holds the tokenizer).
#   run(command="sh docs/bench/session35/device_check.sh", carry=[".whl", ".smoltok"], timeout_s=420)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PYTHONPATH="/tmp/site:$PWD"
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=16
{
  date -u '+%F %H:%M:%S UTC'
  lscpu | grep -E "Model name|^CPU\(s\)|^Model:|^CPU family"
  lscpu | grep -o -E "amx[a-z_0-9]*|avx512_bf16|avx512_vnni" | sort -u | tr '\n' ' '; echo
  python3 -c "import torch; print('torch', torch.__version__)"
} 2>&1 | tee "$out/machine.txt"
python3 -c "
import time; t0 = time.time()
from roseinfer.kernels import load_cpu_kernels
print('C++ kernels built in %.0f s' % (time.time() - t0), load_cpu_kernels() is not None)
" 2>&1 | tail -2 | tee "$out/build.txt"
OMP_NUM_THREADS=4 timeout 60 taskset -c 8-11 python3 docs/bench/session33/smol_shaped.py .smoltok /tmp/smolfull > /dev/null 2>&1 &
two() { OMP_NUM_THREADS=2 taskset -c 0,1 "$@"; }
{ date -u +%T; two timeout 120 python3 benchmarks/small_batch_linear.py --rows 1,4,8,16,32,64; } \
  2>&1 | tee "$out/small_batch_linear.txt"
wait
for context in 70 2000; do
  { date -u +%T; echo "context $context"
    two timeout 100 python3 docs/bench/session35/vnni_one_stream.py --rounds 50 \
      --context $context --model /tmp/smolfull 2>&1 | grep -v -i loading | tail -6; } \
    2>&1 | tee "$out/one_stream_$context.txt"
done
