#!/bin/sh
# roseinfer bench throughput (the default, bf16 here; int8; int8 + int8 KV) from this tree and
# from BASE, and OpenVINO GenAI (fp16 and int8 weights) on the same workload, in turns: ROUNDS
# rounds. Session 23's offline_ab.sh for an AVX512-BF16 host.
#   BASE=/work/wt-base OV_FP16=/tmp/s25/ov_fp16 OV_INT8=/tmp/s25/ov_int8 \
#     WORKLOAD=/tmp/s25/workload.json ROUNDS=2 sh docs/bench/session25/offline_ab.sh
here=$(cd "$(dirname "$0")/../../.." && pwd)
ov=${OV:-/tmp/ovenv/bin/python}
run() {  # label tree flags...
  label=$1 tree=$2; shift 2
  printf "%s %s: " "$label" "$*"
  (cd "$tree" && PYTHONPATH="$tree" "$here/.venv/bin/python" -m roseinfer.cli bench throughput "$@" \
    --no-progress 2>/dev/null | grep -E "^(Elapsed|Output token throughput)" | tr '\n' ' ')
  echo
}
echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), model $(lscpu | awk '/^Model:/ {print $2}'), new $(git -C "$here" rev-parse --short HEAD), base $(git -C "$BASE" rev-parse --short HEAD)"
for r in $(seq "${ROUNDS:-2}"); do
  echo "round $r $(date -u +%H:%M)"
  run base "$BASE"
  run new "$here"
  run base "$BASE" --quantization int8 --kv-cache-dtype int8
  run new "$here" --quantization int8 --kv-cache-dtype int8
  run new "$here" --quantization int8
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_FP16" "$WORKLOAD" 2>/dev/null | tail -1
  "$ov" "$here/docs/bench/session15/openvino_offline.py" "$OV_INT8" "$WORKLOAD" 2>/dev/null | tail -1
done
