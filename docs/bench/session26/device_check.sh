#!/bin/sh
# Session 26's GPU machine (device tool, one call): what its CPU is, the engine on CUDA against
# transformers (test_model_parity.py's cuda variant: tiny random models, fp32, logits and greedy
# tokens alone and batched), the CPU kernels' tests on its CPU (AMX where it has it) and the
# prefill-attention kernel there on 2 threads, fp32 tile against the bf16-pairs tile. The image
# has torch and transformers; the wheels it lacks travel in .whl (pydantic and its deps, gguf,
# llguidance: docs/bench/session26/README.md).
#   run(command="sh docs/bench/session26/device_check.sh", carry=[".whl"], timeout_s=570)
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
{
  date -u '+%F %H:%M UTC'
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket"
  lscpu | grep -o -E "amx[a-z_0-9]*|avx512[a-z_0-9]*" | sort -u | tr '\n' ' '; echo
  nvidia-smi -L
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
  gcc --version | head -1
} 2>&1 | tee "$out/machine.txt"
timeout 180 python3 -c "from roseinfer.kernels import load_cpu_kernels as l; print('C++ kernels built:', l() is not None)" 2>&1 | tail -3 | tee "$out/build.txt"
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_model_parity.py \
  -k "cuda and not smollm2" 2>&1 | tail -15 | tee "$out/cuda_parity.txt"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_kernels.py \
  tests/test_dpbf16_linear.py tests/test_huge_pages.py tests/test_decode_stack.py 2>&1 \
  | tail -25 | tee "$out/cpu_kernels.txt"
for dtype in float32 bfloat16; do
  OMP_NUM_THREADS=2 timeout 45 taskset -c 0,1 python3 benchmarks/prefill_attention.py \
    --shapes 1x512@512,1x512@2000,16x32@1024 --dtype $dtype --repeats 3 2>&1 | tail -5
done | tee "$out/prefill_attention.txt"
