#!/bin/sh
# Session 31's GPU machine, second call (its CPU: an Intel Xeon with AMX, 16 cores): the AMX
# prefill tile (prefill_amx.h) tested and timed on a real AMX CPU, on 2 threads as CI's hosts.
# The image has torch and transformers; the wheels it lacks travel in .whl
# (docs/bench/session31/README.md). Ubuntu's g++ builds the kernels (the image's own links
# libstdc++ statically: session 26).
#   run(command="sh docs/bench/session31/device_check.sh", carry=[".whl"], timeout_s=340)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=16
{
  date -u '+%F %H:%M UTC'
  lscpu | grep -E "Model name|^CPU\(s\)"
  lscpu | grep -o -E "amx[a-z_0-9]*|avx512_bf16" | sort -u | tr '\n' ' '; echo
} 2>&1 | tee "$out/machine.txt"
python3 - <<'PY' 2>&1 | tail -12 | tee "$out/build.txt"
import logging, time
logging.basicConfig(level=logging.INFO)
t0 = time.time()
from roseinfer.kernels.build import load_kernels
k = load_kernels()
print("C++ kernels built in %.0f s, amx %s" % (time.time() - t0, k.amx_linear_available()))
PY
timeout 60 python3 -m pytest -q -x --tb=short -p no:cacheprovider tests/test_kernels.py \
  -k "prefill" 2>&1 | tail -25 | tee "$out/prefill_tests.txt"
OMP_NUM_THREADS=2 timeout 80 taskset -c 0,1 python3 benchmarks/prefill_attention.py \
  --shapes 1x512@2000,16x32@1024,1x64@2000 --dtype bfloat16 --repeats 3 --tiles pairs,amx \
  2>&1 | tail -5 | tee "$out/prefill_attention.txt"
timeout 30 python3 docs/bench/session26/smol_random.py /tmp/smol >/dev/null 2>&1
bench() {  # label, flags...
  label=$1; shift
  printf "%s: " "$label"
  OMP_NUM_THREADS=2 timeout 35 taskset -c 0,1 python3 -m roseinfer.cli bench throughput \
    --model /tmp/smol --dtype bfloat16 --no-progress "$@" 2>/dev/null \
    | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' '
  echo
}
long="--num-seqs 4 --min-input-len 2000 --max-input-len 2000 --min-output-len 1 --max-output-len 1"
{
  date -u '+%F %H:%M UTC'
  bench "4 prompts of 2,000 tokens, attention auto (SDPA prefill)" $long
  bench "4 prompts of 2,000 tokens, attention cpu (C++ prefill kernel, AMX tile)" --attention-backend cpu $long
} 2>&1 | tee "$out/engine_long.txt"
timeout 60 python3 -m pytest -q --tb=short -p no:cacheprovider tests/test_kernels.py \
  -k "not prefill" tests/test_decode_stack.py 2>&1 | tail -12 | tee "$out/cpu_kernels.txt"
