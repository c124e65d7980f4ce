#!/usr/bin/env bash
# What one translation unit pays to parse each header at the kernels' flags (session 58:
# <torch/extension.h> against ATen's headers), and bindings.cpp with torch's pybind11 header:
#   bash docs/bench/session58/header_parse.sh      (from the repository root, nothing else running)
set -euo pipefail
ti=$(.venv/bin/python -c "import torch.utils.cpp_extension as c; print(c.include_paths()[0])")
py=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['include'])")
flags=(-O3 -march=native -fopenmp -std=c++20 -fPIC -isystem "$ti" -isystem "$ti/torch/csrc/api/include" -isystem "$py")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for header in torch/extension.h ATen/ATen.h ATen/core/Tensor.h ATen/Parallel.h; do
  echo "#include <$header>" > "$tmp/t.cpp"
  /usr/bin/time -f "<$header>: %e s" c++ "${flags[@]}" -c "$tmp/t.cpp" -o "$tmp/t.o"
done
printf '#include "%s/roseinfer/kernels/aten.h"\n' "$PWD" > "$tmp/t.cpp"
/usr/bin/time -f "kernels/aten.h: %e s" c++ "${flags[@]}" -c "$tmp/t.cpp" -o "$tmp/t.o"
for rev in ba28ca4 HEAD; do  # bindings.cpp before and after
  mkdir -p "$tmp/$rev"
  for f in $(git ls-tree --name-only "$rev:roseinfer/kernels"); do
    git show "$rev:roseinfer/kernels/$f" > "$tmp/$rev/$f"
  done
  /usr/bin/time -f "bindings.cpp at $rev: %e s" c++ "${flags[@]}" -DTORCH_EXTENSION_NAME=x \
    -c "$tmp/$rev/bindings.cpp" -o "$tmp/$rev/b.o"
done
