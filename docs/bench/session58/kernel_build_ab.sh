#!/usr/bin/env bash
# The C++ kernels' build from an empty cache, two trees alternated (session 58: <torch/extension.h>
# replaced by ATen's own headers): `bash docs/bench/session58/kernel_build_ab.sh BASE NEW [ROUNDS]`
# from the repository root, nothing else running. Each round builds each tree's native kernels
# in a fresh $TORCH_EXTENSIONS_DIR and prints its wall time, then each file's compile time
# (ninja's log: up to 4 at once on 2 CPUs).
set -euo pipefail
base=${1:?BASE}; new=${2:?NEW}; rounds=${3:-2}
root=$(pwd); work=$(mktemp -d)
for rev in "$base" "$new"; do git -C "$root" worktree add -q --detach "$work/$rev" "$rev"; done
trap 'for rev in "$base" "$new"; do git -C "$root" worktree remove --force "$work/$rev"; done; rm -rf "$work"' EXIT
for round in $(seq "$rounds"); do
  for rev in "$base" "$new"; do
    cache="$work/cache_${rev}_$round"; mkdir -p "$cache"
    start=$(date +%s.%N)
    (cd "$work/$rev" && TORCH_EXTENSIONS_DIR=$cache PYTHONPATH=. "$root/.venv/bin/python" -c \
      "from roseinfer.kernels import load_cpu_kernels; assert load_cpu_kernels() is not None")
    end=$(date +%s.%N)
    printf 'round %s %s: build %.1f s\n' "$round" "$rev" "$(echo "$end - $start" | bc)"
    awk 'NR>1 && $4 ~ /\.o$/ {printf "  %s %.1f s\n", $4, ($2-$1)/1000}' "$cache"/roseinfer_cpu_kernels_*/.ninja_log
  done
done
