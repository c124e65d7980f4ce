#!/bin/sh
# Offline, bf16 weights, the KV cache's precision on both sides, in turns (ROUNDS rounds):
# roseinfer bench throughput with its bf16 cache and with `--kv-cache-dtype int8`; OpenVINO GenAI
# (fp16 export, bf16 inference on this CPU) with its default u8 cache and with a bf16 one.
#   OV_FP16=/tmp/s25/ov_fp16 WORKLOAD=/tmp/s25/workload.json ROUNDS=2 sh docs/bench/session29/offline_kv.sh
here=$(cd "$(dirname "$0")/../../.." && pwd)
ov=${OV:-/tmp/ovenv/bin/python}
run() {  # flags...
  printf "roseinfer %s: " "${*:-(defaults)}"
  (cd "$here" && .venv/bin/python -m roseinfer.cli bench throughput "$@" --no-progress 2>/dev/null \
    | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' ')
  echo
}
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), family $(lscpu | awk '/^CPU family:/ {print $3}') model $(lscpu | awk '/^Model:/ {print $2}'), $(git -C "$here" rev-parse --short HEAD)"
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%H:%M)"
  run
  run --kv-cache-dtype int8
  "$ov" "$here/docs/bench/session29/openvino_offline_kv.py" "$OV_FP16" "$WORKLOAD" u8 2>/dev/null | tail -1
  "$ov" "$here/docs/bench/session29/openvino_offline_kv.py" "$OV_FP16" "$WORKLOAD" bf16 2>/dev/null | tail -1
done
