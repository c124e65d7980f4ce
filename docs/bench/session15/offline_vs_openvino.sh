#!/bin/sh
# roseinfer bench throughput (fp32, bf16, int8, int8 + int8 KV) and OpenVINO GenAI (fp16 and
# int8 weights) on the same workload, in turns: ROUNDS rounds. OV=/tmp/ovenv/bin/python,
# OV_FP16 / OV_INT8 the exported models, WORKLOAD the JSON of workload_json.py.
# OV_FP16=/tmp/s15/ov_fp16 OV_INT8=/tmp/s15/ov_int8 WORKLOAD=/tmp/s15/workload.json \
#   docs/bench/session15/offline_vs_openvino.sh > offline_vs_openvino.txt
here=$(cd "$(dirname "$0")/../../.." && pwd)
ov=${OV:-/tmp/ovenv/bin/python}
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%H:%M)"
  for mode in "--dtype auto" "--dtype bfloat16" "--quantization int8" "--quantization int8 --kv-cache-dtype int8"; do
    printf "roseinfer %s: " "$mode"
    "$here/.venv/bin/roseinfer" bench throughput $mode --no-progress 2>/dev/null | grep -E "^(Model|Elapsed|Output token throughput)" | tr '\n' ' '
    echo
  done
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_FP16" "$WORKLOAD" 2>/dev/null | tail -1
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_INT8" "$WORKLOAD" 2>/dev/null | tail -1
done
