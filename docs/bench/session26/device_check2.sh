#!/bin/sh
# Second device call (session 26): the image's own compiler (CXX=/opt/gcc/bin/g++) links
# libstdc++ statically into the extension, and a second libstdc++ in the process crashes the first
# C++ error message holding a number (device_check.sh's segfault); Ubuntu's g++ builds it as this
# machine does. Then the CPU kernels' tests on the AMX CPU, and the engine on 2 threads with a
# SmolLM2-shaped random bf16 model: bench throughput's workload and 2,000-token prompts, the
# C++ prefill attention (`--attention-backend cpu`) against SDPA (`reference`).
#   run(command="sh docs/bench/session26/device_check2.sh", carry=[".whl"], timeout_s=450)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc
timeout 150 python3 -c "from roseinfer.kernels import load_cpu_kernels as l; print('C++ kernels built:', l() is not None)" 2>&1 | tail -3 | tee "$out/build2.txt"
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py \
  tests/test_dpbf16_linear.py tests/test_huge_pages.py tests/test_decode_stack.py 2>&1 \
  | tail -12 | tee "$out/cpu_kernels2.txt"
timeout 30 python3 docs/bench/session26/smol_random.py /tmp/smol >/dev/null 2>&1
bench() {  # label, flags...
  label=$1; shift
  printf "%s: " "$label"
  OMP_NUM_THREADS=2 timeout 40 taskset -c 0,1 python3 -m roseinfer.cli bench throughput \
    --model /tmp/smol --dtype bfloat16 --no-progress "$@" 2>/dev/null \
    | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' '
  echo
}
{
  date -u '+%F %H:%M UTC'
  for b in cpu reference; do
    bench "offline workload, attention $b" --attention-backend $b
    bench "4 prompts of 2,000 tokens, 1 output token, attention $b" --attention-backend $b \
      --num-seqs 4 --min-input-len 2000 --max-input-len 2000 --min-output-len 1 --max-output-len 1
  done
} 2>&1 | tee "$out/engine_amx.txt"
