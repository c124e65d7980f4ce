#!/usr/bin/env bash
# usage: docs/bench/session72/bis_step.sh REV (a worktree at /tmp/bis: git worktree add --detach /tmp/bis)
#  -> int8 one-stream step in the AMD-proxy mode (native build without AMX)
set -e
rev=$1
cd /tmp/bis && git checkout -q -f $rev
sed -i 's/cflags: tuple\[str, ...\] = ("-O3", "-march=native", "-fopenmp")/cflags: tuple[str, ...] = ("-O3", "-march=native", "-fopenmp", "-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")/' roseinfer/kernels/build.py
grep -q mno-amx-tile roseinfer/kernels/build.py || { echo "patch failed"; exit 1; }
export ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 ROSEINFER_BF16_PAIRS=dpbf16 ROSEINFER_PREFETCH_ONCE=nta
PYTHONPATH=/tmp/bis /work/main/.venv/bin/python -c "from roseinfer.kernels import load_cpu_kernels; k=load_cpu_kernels(); assert not k.amx_linear_available()" >/dev/null 2>&1
echo "$rev $(PYTHONPATH=/tmp/bis:/tmp/bis/benchmarks /work/main/.venv/bin/python benchmarks/one_stream.py --rounds 20 2>&1 | grep -E '^(bf16|int8|int8\+kv8): step' | awk '{print $1, $3}' | tr '\n' ' ')"
