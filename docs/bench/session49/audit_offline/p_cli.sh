PY=/work/main/.venv/bin/python
M=/tmp/s47/audit/tinysmol
cd /work/main
run(){ echo "### $*"; timeout 120 $PY -m roseinfer.cli "$@" 2>&1 | grep -v '^Loading' | tail -4; echo "rc=${PIPESTATUS[0]}"; }
B="--model $M --dtype float32 --num-kv-blocks 64"
run generate --prompt "Hello" $B --max-new-tokens 6
run generate --prompt "Hello" $B --max-new-tokens 6 --temperature 1 --seed 1
run generate --prompt "Hello" $B --max-new-tokens 6 --temperature 1 --seed 1
run generate --prompt "Hello" $B --max-new-tokens 6 --temperature 1 --seed 2
run generate --prompt "Hello" $B --max-new-tokens 6 --temperature 1 --top-k 1 --seed 2
run generate --prompt "Hello" $B --max-new-tokens 6 --chat
run generate --prompt "Hello" $B --max-new-tokens 6 --temperature -1
run generate --prompt "Hello" $B --max-new-tokens 0
run generate --prompt "Hello" $B --top-p 0
run generate --prompt "Hello" $B --max-new-token 5
run generate --prompt "Hello" $B --dtype float64
run generate --prompt "" $B
run generate --prompt "Hello" --model /nonexistent --dtype float32
run generate --prompt "Hello" $B --max-model-len 1
run generate --prompt "Hello" $B --max-model-len 3 --max-new-tokens 6
run generate --prompt "Hello" $B --device cuda
run generate --prompt "Hello" $B --temperature nan
run generate --prompt "Hello" $B --kv-cache-memory inf
