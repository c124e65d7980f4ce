#!/bin/sh
# Session 31's GPU machine, first call (device tool; its CPU is an Intel Xeon with AMX, 16 cores):
# the AMX prefill tile (prefill_amx.h) tested and timed on a real AMX CPU. The image has torch and
# transformers; the wheels it lacks travel in .whl (docs/bench/session31/README.md). Ubuntu's g++
# builds the kernels (the image's own links libstdc++ statically: session 26).
#   run(command="sh docs/bench/session31/device_check1.sh", carry=[".whl"], timeout_s=480)
# The build failed: GCC's tile intrinsics paste the tile number into the instruction's text, and
# AmxTiles passed it as a template argument (fixed in amx.h; device_check.sh is the second call).
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=16
{
  date -u '+%F %H:%M UTC'
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|MHz"
  lscpu | grep -o -E "amx[a-z_0-9]*|avx512_bf16" | sort -u | tr '\n' ' '; echo
  nvidia-smi -L
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} 2>&1 | tee "$out/machine.txt"
timeout 150 python3 -c "from roseinfer.kernels import load_cpu_kernels as l; k = l(); print('C++ kernels built:', k is not None, 'amx', k.amx_linear_available())" 2>&1 | tail -3 | tee "$out/build.txt"
# The prefill kernel's tests first (the AMX tile among them), then the other kernels' tests
# with all 16 threads (the decode stack's one-region path with more than two threads).
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py -k "prefill" 2>&1 \
  | tail -15 | tee "$out/prefill_tests.txt"
for dtype in bfloat16; do
  OMP_NUM_THREADS=2 timeout 100 taskset -c 0,1 python3 benchmarks/prefill_attention.py \
    --shapes 1x512@512,1x512@2000,16x32@1024,1x64@2000 --dtype $dtype --repeats 3 \
    --tiles pairs,amx 2>&1 | tail -5
done | tee "$out/prefill_attention.txt"
timeout 30 python3 docs/bench/session26/smol_random.py /tmp/smol >/dev/null 2>&1
bench() {  # label, flags...
  label=$1; shift
  printf "%s: " "$label"
  OMP_NUM_THREADS=2 timeout 40 taskset -c 0,1 python3 -m roseinfer.cli bench throughput \
    --model /tmp/smol --dtype bfloat16 --no-progress "$@" 2>/dev/null \
    | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' '
  echo
}
long="--num-seqs 4 --min-input-len 2000 --max-input-len 2000 --min-output-len 1 --max-output-len 1"
{
  date -u '+%F %H:%M UTC'
  bench "4 prompts of 2,000 tokens, attention auto (SDPA prefill)" $long
  bench "4 prompts of 2,000 tokens, attention cpu (C++ prefill kernel, AMX tile)" --attention-backend cpu $long
  bench "4 prompts of 2,000 tokens, int8 KV cache (C++ prefill kernel, AMX tile)" --kv-cache-dtype int8 $long
} 2>&1 | tee "$out/engine_long.txt"
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py -k "not prefill" \
  tests/test_dpbf16_linear.py tests/test_decode_stack.py tests/test_gated_linear.py 2>&1 \
  | tail -12 | tee "$out/cpu_kernels.txt"
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_model_parity.py \
  -k "cuda and not smollm2" 2>&1 | tail -4 | tee "$out/cuda_parity.txt"
