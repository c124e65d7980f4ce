"""variants_ab.py DIR1,DIR2,... ROWS [cold]: build int8_linear.cpp from each DIR (a copy of roseinfer/kernels/int8_linear.cpp, vec.h and lane_rows.h, edited), time SmolLM2's linears (30 layers with `cold`, else one) per variant in turns. Session 17's script with the build directories under /tmp/s18. Session 18 ran /tmp/s18/v_base (`d819e41`) against v_A (`lane_loop_order.patch`), v_B (`lane_depth128.patch`) and v_C (both)."""

import os
import shutil
import statistics
import sys
import time

import torch
from torch.utils.cpp_extension import load

K = "/work/main/roseinfer/kernels"
decl = """torch::Tensor int8_linear(torch::Tensor x, torch::Tensor weight, torch::Tensor scale, c10::optional<torch::Tensor> bias);
torch::Tensor small_batch_linear(torch::Tensor x, torch::Tensor weight, c10::optional<torch::Tensor> bias);"""
mods = {}
for d in sys.argv[1].split(","):
    b = f"/tmp/s18/build_{os.path.basename(d)}"
    os.makedirs(b, exist_ok=True)
    for f in os.listdir(d):
        shutil.copy(os.path.join(d, f), b) if not os.path.exists(os.path.join(b, f)) or open(
            os.path.join(d, f)
        ).read() != open(os.path.join(b, f)).read() else None
    with open(f"{b}/bind.cpp", "w") as f:
        f.write(
            f'#include <torch/extension.h>\nnamespace roseinfer {{\n{decl}\n}}\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ m.def("int8_linear", &roseinfer::int8_linear); m.def("small_batch_linear", &roseinfer::small_batch_linear); }}\n'
        )
    mods[os.path.basename(d)] = load(
        f"ab_{os.path.basename(d)}",
        [f"{b}/bind.cpp", f"{b}/int8_linear.cpp"],
        extra_cflags=["-O3", "-march=native", "-fopenmp", f"-I{b}"],
        extra_ldflags=["-fopenmp"],
        build_directory=b,
    )
rows = [int(r) for r in sys.argv[2].split(",")]
cold = len(sys.argv) > 3 and sys.argv[3] == "cold"
h, inter, kv, L = 576, 1536, 192, 30
shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]
torch.manual_seed(0)
nl = L if cold else 1
qw = [torch.randint(-127, 128, (n, k), dtype=torch.int8) for _ in range(nl) for n, k in shapes]
fw = [torch.randn(n, k) for _ in range(nl) for n, k in shapes]
bw = [w.bfloat16() for w in fw]
sc = {n: torch.rand(n) for n, _ in shapes}
flop1 = 2 * sum(n * k for n, k in shapes) * nl
for M in rows:
    xs = {k: torch.randn(M, k) for k in (h, inter)}
    xb = {k: v.bfloat16() for k, v in xs.items()}
    fns = {
        "fp32": lambda m, xs=xs: [m.small_batch_linear(xs[w.shape[1]], w, None) for w in fw],
        "bf16": lambda m, xb=xb: [m.small_batch_linear(xb[w.shape[1]], w, None) for w in bw],
        "int8": lambda m, xs=xs: [
            m.int8_linear(xs[w.shape[1]], w, sc[w.shape[0]], None) for w in qw
        ],
    }
    t = {}
    for _ in range(9 if cold else 31):
        for name, m in mods.items():
            for fn, f in fns.items():
                s = time.perf_counter()
                f(m)
                t.setdefault((name, fn), []).append(time.perf_counter() - s)
    for name in mods:
        print(
            f"M={M:3d} {name:>8}: "
            + "  ".join(
                f"{fn} {statistics.median(t[(name, fn)][1:]) * 1e3:7.3f} ms ({flop1 * M / statistics.median(t[(name, fn)][1:]) / 1e9:5.0f} GF/s)"
                for fn in fns
            ),
            flush=True,
        )
