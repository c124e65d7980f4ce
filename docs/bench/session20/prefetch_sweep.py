"""Session 15's prefetch sweep, rerun in session 20 with three more variants (512 B and 1 KB into L1,
2 KB into L2). dot_row's software prefetch (2 KB ahead into L1, as shipped; 4 KB; 8 KB into L2; none)
for int8 and bf16 weights at one row: int8_linear.cpp built once per variant, the 120 decode
linears and the int8 LM head timed in turns.

    PYTHONPATH=. .venv/bin/python docs/bench/session20/prefetch_sweep.py [reps]
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load

ROOT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roseinfer", "kernels"
)
BIND = """#include <torch/extension.h>
namespace roseinfer {
torch::Tensor int8_linear(torch::Tensor, torch::Tensor, torch::Tensor, c10::optional<torch::Tensor>);
torch::Tensor small_batch_linear(torch::Tensor, torch::Tensor, c10::optional<torch::Tensor>);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("int8_linear", &roseinfer::int8_linear); m.def("small_batch_linear", &roseinfer::small_batch_linear); }
"""
VARIANTS = {
    "512-T0": ("512", "_MM_HINT_T0"),
    "1K-T0": ("1024", "_MM_HINT_T0"),
    "2K-T0": ("2048", "_MM_HINT_T0"),
    "4K-T0": ("4096", "_MM_HINT_T0"),
    "8K-T1": ("8192", "_MM_HINT_T1"),
    "2K-T1": ("2048", "_MM_HINT_T1"),
    "none": None,
}
mods = {}
for name, v in VARIANTS.items():
    d = os.path.join(tempfile.gettempdir(), "prefetch_sweep20", name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(ROOT):
        if f.endswith(".h") or f == "int8_linear.cpp":
            shutil.copy(os.path.join(ROOT, f), d)
    src = open(os.path.join(d, "int8_linear.cpp")).read()
    old = "      if (p % kLine == 0) _mm_prefetch(reinterpret_cast<const char*>(w + p + kAhead), _MM_HINT_T0);"
    assert old in src
    if v is None:
        src = src.replace(old, "      (void)kLine; (void)kAhead;")
    else:
        src = src.replace(
            "constexpr int64_t kAhead = 2048 / sizeof(W);",
            f"constexpr int64_t kAhead = {v[0]} / sizeof(W);",
        )
        src = src.replace(old, old.replace("_MM_HINT_T0", v[1]))
    open(os.path.join(d, "int8_linear.cpp"), "w").write(src)
    open(os.path.join(d, "bind.cpp"), "w").write(BIND)
    mods[name] = load(
        f"pf20_{name.replace('-', '_')}",
        [f"{d}/bind.cpp", f"{d}/int8_linear.cpp"],
        extra_cflags=["-O3", "-march=native", "-fopenmp", f"-I{d}"],
        extra_ldflags=["-fopenmp"],
        build_directory=d,
    )
H, INTER, KV, L = 576, 1536, 192, 30
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
ws = [torch.randint(-127, 127, s, dtype=torch.int8) for s in shapes]
ss = [torch.rand(s[0]) * 0.01 for s in shapes]
bws = [torch.randn(s, dtype=torch.bfloat16) * 0.02 for s in shapes]
head = torch.randint(-127, 127, (49152, H), dtype=torch.int8)
hs = torch.rand(49152)
xs = {K: torch.randn(1, K) for K in (H, INTER)}
bxs = {K: xs[K].bfloat16() for K in (H, INTER)}
nbytes = sum(w.numel() for w in ws)


def int8_linears(m):
    return [m.int8_linear(xs[w.shape[1]], w, s, None) for w, s in zip(ws, ss, strict=True)]


def int8_head(m):
    return m.int8_linear(xs[H], head, hs, None)


def bf16_linears(m):
    return [m.small_batch_linear(bxs[w.shape[1]], w, None) for w in bws]


fns = {"int8 120": int8_linears, "int8 head": int8_head, "bf16 120": bf16_linears}
times = {}
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 15):
    for name, m in mods.items():
        for f, fn in fns.items():
            t = time.perf_counter()
            fn(m)
            times.setdefault((name, f), []).append(time.perf_counter() - t)
for name in mods:
    print(
        f"{name:6s}: "
        + "  ".join(f"{f} {statistics.median(times[(name, f)]) * 1e3:6.2f} ms" for f in fns),
        flush=True,
    )
