"""The weight prefetch of `dpbf16_linear` (bf16) or `vnni_int8_linear` (int8), variants built
side by side from this tree's source and timed in turns: SmolLM2's 120 decode linears and the LM
head (random weights) at ROWS rows, each variant's median of 5 passes per round, ROUNDS rounds.
A variant is `AHEADxL2`: AHEAD elements of the stream's pointer ahead (dpbf16: 4-byte pairs;
vnni: bytes; 0: no software prefetch), into L2 (`prefetch_l2`) if L2 is 1, else into L1
(`_mm_prefetch(..., _MM_HINT_T0)`).

    .venv/bin/python docs/bench/session25/prefetch_variants.py dpbf16 512x0,1024x1 ROWS ROUNDS
    .venv/bin/python docs/bench/session25/prefetch_variants.py vnni 1024x0,4096x1 ROWS ROUNDS
"""

import os
import statistics
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roseinfer", "kernels")
# kernel -> (source file, its prefetch line as shipped, the pointer it prefetches from)
KERNELS = {
    "dpbf16": ("dpbf16_linear.cpp", "prefetch_l2(tile + 1024);", "tile"),
    # both branches of the choice by row count (`kFarPrefetchRows`), replaced by one variant
    "vnni": (
        "vnni_linear.cpp",
        "if (far)\n        prefetch_l2(p + 4096);\n      else\n"
        "        _mm_prefetch(reinterpret_cast<const char*>(p + 1024), _MM_HINT_T0);",
        "p",
    ),
}
which = sys.argv[1]
src_name, shipped, ptr = KERNELS[which]
variant = (
    f"if (AHEAD > 0) {{ if (L2) prefetch_l2({ptr} + AHEAD); else "
    f"_mm_prefetch(reinterpret_cast<const char*>({ptr} + AHEAD), _MM_HINT_T0); }}"
)
BIND = f"""#include <torch/extension.h>
#include "ops.h"
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{
  m.def("lin", &roseinfer::{which}_{"linear" if which == "dpbf16" else "int8_linear"});
  m.def("pack", &roseinfer::{which}_pack_weight);
}}
"""

build = tempfile.mkdtemp()
for name in ("vec.h", "ops.h"):
    with open(os.path.join(ROOT, name)) as src, open(os.path.join(build, name), "w") as dst:
        dst.write(src.read())
with open(os.path.join(ROOT, src_name)) as f:
    source = f.read()
assert shipped in source, "the shipped prefetch line moved: update this script"
with open(os.path.join(build, "dp.cpp"), "w") as f:
    f.write(source.replace(shipped, variant))
with open(os.path.join(build, "bind.cpp"), "w") as f:
    f.write(BIND)
mods = {}
for v in sys.argv[2].split(","):
    ahead, l2 = v.split("x")
    mods[v] = load(
        f"{which}_prefetch_{ahead}_{l2}",
        [os.path.join(build, "dp.cpp"), os.path.join(build, "bind.cpp")],
        extra_cflags=["-O3", "-march=native", "-fopenmp", f"-DAHEAD={ahead}", f"-DL2={l2}"],
        extra_ldflags=["-fopenmp"],
        build_directory=tempfile.mkdtemp(),
    )
H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(V, H)]
torch.manual_seed(0)
if which == "dpbf16":
    weights = [torch.randn(s).bfloat16() * 0.02 for s in shapes]
    scales = [None] * len(weights)
else:
    weights = [torch.randint(-127, 128, s, dtype=torch.int8) for s in shapes]
    scales = [torch.rand(w.shape[0]).bfloat16() / 64 for w in weights]
packed = [next(iter(mods.values())).pack(w) for w in weights]
nbytes = sum(w.numel() * w.element_size() for w in weights)
rows, rounds = int(sys.argv[3]), int(sys.argv[4])
x = {K: torch.randn(rows, K).bfloat16() for K in (H, INTER)}
times: dict[str, list[float]] = {v: [] for v in mods}
for _ in range(rounds):
    for v, m in mods.items():
        passes = []
        for _ in range(5):
            start = time.perf_counter()
            for w, p, s in zip(weights, packed, scales, strict=True):
                m.lin(x[w.shape[1]], p, None) if s is None else m.lin(x[w.shape[1]], p, s, None)
            passes.append(time.perf_counter() - start)
        times[v].append(statistics.median(passes))
for v, t in times.items():
    med = statistics.median(t) * 1e3
    print(
        f"{which}, {rows} rows, prefetch {v}: median {med:.2f} ms ({nbytes / med / 1e6:.1f} GB/s)"
    )
