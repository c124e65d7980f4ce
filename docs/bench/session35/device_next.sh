#!/bin/sh
# For the next lent GPU machine (its Xeon with AMX), BENCHMARKS.md's "What's next" 0: session 35's
# 32-stream served case read 747 tok/s with the VNNI copy against 923 without in one pair, though
# both servers run `amx_int8_linear` at 32 rows. This runs 32-row decode steps with and without
# the copy in one process (`rows_ab.py`), then the 32-stream case on two servers side by side
# in both orders (with, without, without, with), on 2 threads as CI's hosts have. With
# `profile`: where a batch-32 step goes there instead (issue 22's 32-stream goal, ~1.0x / 1.3x
# vLLM there): each stage of 200 steps (session 30's step_stages.py at batch 32), the decode
# attention alone, and the 120 linears alone at 32 rows.
#   run(command="sh docs/bench/session35/device_next.sh", carry=[".whl", ".smoltok"], timeout_s=420)
#   run(command="sh docs/bench/session35/device_next.sh profile", carry=[".whl", ".smoltok"], timeout_s=300)
part=${1:-served}
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PYTHONPATH="/tmp/site:$PWD"
export CXX=/usr/bin/g++ CC=/usr/bin/gcc TORCH_EXTENSIONS_DIR=/tmp/ext_system_gcc MAX_JOBS=16
{ date -u '+%F %H:%M:%S UTC'; lscpu | grep -E "Model name|^CPU\(s\)|^Model:"; } | tee "$out/machine.txt"
python3 -c "from roseinfer.kernels import load_cpu_kernels; print(load_cpu_kernels() is not None)" \
  2>&1 | tail -1 | tee "$out/build.txt"
OMP_NUM_THREADS=4 timeout 60 taskset -c 8-11 python3 docs/bench/session33/smol_shaped.py .smoltok \
  /tmp/smolfull > /dev/null 2>&1
two() { OMP_NUM_THREADS=2 taskset -c 0,1 "$@"; }
if [ "$part" = profile ]; then
  sed 's#model="smollm2"#model="/tmp/smolfull"#; s#, 1, context=70, max_new_tokens=400#, 32, context=70, max_new_tokens=400#' \
    docs/bench/session30/step_stages.py > /tmp/ss32.py
  for m in int8 bf16; do date -u +%T; two timeout 90 python3 /tmp/ss32.py $m 2>&1 | grep -v -i loading | tail -14; done \
    2>&1 | tee "$out/step_stages_32.txt"
  for kv in auto int8; do two timeout 60 python3 benchmarks/decode_attention.py --batch-size 32 \
    --context 135 --kv-cache-dtype $kv; done 2>&1 | tee "$out/decode_attention_32.txt"
  two timeout 60 python3 benchmarks/small_batch_linear.py --rows 32 2>&1 | tee "$out/linears_32.txt"
  exit 0
fi
{ date -u +%T; two timeout 100 python3 docs/bench/session35/rows_ab.py /tmp/smolfull 32,1,32 40; } \
  2>&1 | grep -v -i loading | tee "$out/rows_ab_32.txt"
serve() {  # port rows (-1: as built)
  two python3 -c "import runpy; from roseinfer.backends import cpu_linear
cpu_linear.VNNI_ROWS_ON_AMX = $2 if $2 >= 0 else cpu_linear.VNNI_ROWS_ON_AMX
runpy.run_module('roseinfer.server', run_name='__main__', alter_sys=True)" \
    --model /tmp/smolfull --port $1 --quantization int8 --kv-cache-dtype int8 \
    > "/tmp/server_$1.log" 2>&1 &
  pids="$pids $!"
}
serve 8801 -1; serve 8802 0
for port in 8801 8802; do
  for _ in $(seq 1 120); do curl -sf http://127.0.0.1:$port/health >/dev/null && break; sleep 1; done
  curl -s http://127.0.0.1:$port/v1/completions -H 'Content-Type: application/json' \
    -d '{"model":"smolfull","prompt":"Hello","max_tokens":8,"temperature":0}' >/dev/null
done
short() {  # label port
  two timeout 80 python3 -m roseinfer.cli bench serve --base-url http://127.0.0.1:$2/v1 \
    --tokenizer /tmp/smolfull --no-progress --random-input-len 70 --random-output-len 128 \
    --concurrency 32 --num-prompts 128 --seed 1 > "/tmp/$1.txt" 2>&1
  printf "%s %-8s " "$(date -u +%H:%M:%S)" "$1"
  awk -F: '/Output token throughput/{o=$2} /Median TPOT/{t=$2} /Failed/{f=$2}
    END{gsub(/ /,"",o);gsub(/ /,"",t);gsub(/ /,"",f);
    printf "32 streams: out tok/s %s, TPOT p50 %s ms, failed %s\n",o,t,f}' "/tmp/$1.txt"
}
{ short with 8801; short without 8802; short without 8802; short with 8801; } 2>&1 \
  | tee "$out/served_32_ab.txt"
kill $pids 2>/dev/null
