#!/bin/sh
# Third device call (session 26): bf16 prefill chunks through SDPA on the AMX CPU (the default
# there since this commit) against the C++ prefill kernel (`--attention-backend cpu`), the
# engine on 2 threads with smol_random.py's model; the new tests on that CPU first.
#   run(command="sh docs/bench/session26/device_check3.sh", carry=[".whl"], timeout_s=270)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py -k sdpa 2>&1 \
  | tail -3 | tee "$out/sdpa_tests.txt"
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
  bench "4 prompts of 2,000 tokens, attention cpu (C++ prefill kernel)" --attention-backend cpu $long
  bench "offline workload, attention auto (SDPA prefill)"
} 2>&1 | tee "$out/engine_amx_sdpa.txt"
