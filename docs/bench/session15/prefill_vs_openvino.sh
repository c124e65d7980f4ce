#!/bin/sh
# The workload's prefill alone (every request generates 1 token), roseinfer int8 + int8 KV and
# fp32 against OpenVINO GenAI fp16 and int8, in turns, ROUNDS rounds (as offline_vs_openvino.sh).
here=$(cd "$(dirname "$0")/../../.." && pwd)
ov=${OV:-/tmp/ovenv/bin/python}
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%H:%M)"
  for mode in "--dtype auto" "--quantization int8 --kv-cache-dtype int8"; do
    printf "roseinfer %s: " "$mode"
    "$here/.venv/bin/roseinfer" bench throughput $mode --min-output-len 1 --max-output-len 1 \
      --no-progress 2>/dev/null | grep -E "^(Elapsed|Output tokens)" | tr '\n' ' '
    echo
  done
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_FP16" "$WORKLOAD" 1 2>/dev/null | tail -1
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_INT8" "$WORKLOAD" 1 2>/dev/null | tail -1
done
