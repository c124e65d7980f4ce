#!/bin/sh
# roseinfer bench throughput in fp32 (`--dtype auto` on this CPU) at WT_BASE's checkout and this
# one, then OpenVINO GenAI with fp16 and int8 weights (session 15's openvino_offline.py), on the
# same workload, ROUNDS rounds in turns. Output tok/s per run.
# WT_BASE=/work/wt-base OV_FP16=/tmp/s19/ov_fp16 OV_INT8=/tmp/s19/ov_int8 \
#   WORKLOAD=/tmp/s19/workload.json ROUNDS=2 sh docs/bench/session23/offline_ab.sh
here=$(cd "$(dirname "$0")/../../.." && pwd)
ov=${OV:-/tmp/ovenv/bin/python}
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}')"
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%H:%M)"
  for tree in "$WT_BASE" "$here"; do
    for mode in "--dtype auto" ${MODES:-}; do
      printf "roseinfer %s %s: " "$(git -C "$tree" rev-parse --short HEAD)" "$mode"
      # shellcheck disable=SC2086 # the mode is two words
      (cd "$tree" && PYTHONPATH=$tree "$here/.venv/bin/python" -m roseinfer.cli bench throughput $mode \
        --no-progress 2>/dev/null | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' ')
      echo
    done
  done
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_FP16" "$WORKLOAD" 2>/dev/null | tail -1
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_INT8" "$WORKLOAD" 2>/dev/null | tail -1
done
