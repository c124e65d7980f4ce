#!/usr/bin/env bash
# One stream (benchmarks/one_stream.py of each tree, 30 rounds a run) on the AMD hosts' paths as
# amd_proxy_served.sh sets them up, session 45's tree and this session's in turns.
export ATEN_CPU_CAPABILITY=avx512 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 ROSEINFER_BF16_PAIRS=dpbf16 \
  ROSEINFER_PREFETCH_ONCE=nta
for i in 1 2; do
  for rev in s45 head72; do
    isa=(); [ $rev = head72 ] && isa=(ROSEINFER_KERNEL_ISA=avx512_bf16)
    echo "== $rev run $i"
    env -C /tmp/$rev PYTHONPATH=/tmp/$rev:/tmp/$rev/benchmarks "${isa[@]}" /work/main/.venv/bin/python \
      benchmarks/one_stream.py --rounds 30 2>&1 | grep -E "bandwidth|step"
  done
done
