#!/bin/sh
# Session 35's second call on the GPU machine's Xeon (AMX): after `KernelInt8Linear` keeps a VNNI
# copy for up to VNNI_ROWS_ON_AMX rows. The kernels' and layers' tests on AMX (16 threads), then
# on 2 threads (`taskset -c 0,1`) decode steps with and without the copy in one process
# (`rows_ab.py`, batches 1-16) and one stream against its floor (`benchmarks/one_stream.py`),
# on session 33's SmolLM2-shaped random model.
#   run(command="sh docs/bench/session35/device_check2.sh", carry=[".whl", ".smoltok"], timeout_s=420)
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
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py tests/test_gated_linear.py \
  tests/test_kernel_out.py tests/test_huge_pages.py tests/test_decode_stack.py tests/test_backends.py \
  2>&1 | tail -12 | tee "$out/tests.txt"
wait
two() { OMP_NUM_THREADS=2 taskset -c 0,1 "$@"; }
{ date -u +%T; two timeout 120 python3 docs/bench/session35/rows_ab.py /tmp/smolfull 1,2,4,8,12,16 60; } \
  2>&1 | grep -v -i loading | tee "$out/rows_ab.txt"
{ date -u +%T; two timeout 90 python3 benchmarks/one_stream.py --rounds 60 --model /tmp/smolfull; } \
  2>&1 | grep -v -i loading | tail -5 | tee "$out/one_stream.txt"
