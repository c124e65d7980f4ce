"""Session 15's experiment, not shipped: int8 x int8 products on AVX2 (x rounded to int8 per 64
inputs, as vnni_int8_linear does; vpmaddubsw on |q| and the weights with q's sign) against the
weight-only `int8_linear`, over SmolLM2's 120 decode linears (random int8 weights, DRAM-cold),
the two taking turns. The kernel is `avx2_int8x8_linear.patch` applied to a copy of this tree's
kernels and built alone; it first checks itself against the blockwise reference.

    .venv/bin/python docs/bench/session15/avx2_int8x8.py   # AVX2 without AVX-512 only
"""

import os
import shutil
import statistics
import subprocess
import tempfile
import time

import torch
from torch.utils.cpp_extension import load

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BIND = """#include <torch/extension.h>
namespace roseinfer {
torch::Tensor int8_linear(torch::Tensor, torch::Tensor, torch::Tensor, c10::optional<torch::Tensor>);
torch::Tensor avx2_int8_linear(torch::Tensor, torch::Tensor, torch::Tensor, c10::optional<torch::Tensor>);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("int8_linear", &roseinfer::int8_linear);
  m.def("avx2_int8_linear", &roseinfer::avx2_int8_linear);
}
"""


def build(tmp: str):
    shutil.copytree(
        os.path.join(ROOT, "roseinfer", "kernels"), os.path.join(tmp, "roseinfer", "kernels")
    )
    with open(os.path.join(HERE, "avx2_int8x8_linear.patch")) as f:
        subprocess.run(["patch", "-s", "-p1", "-d", tmp], input=f.read(), text=True, check=True)
    src = os.path.join(tmp, "roseinfer", "kernels")
    with open(os.path.join(src, "bind_ab.cpp"), "w") as f:
        f.write(BIND)
    return load(
        "avx2_int8x8",
        [os.path.join(src, "bind_ab.cpp"), os.path.join(src, "int8_linear.cpp")],
        extra_cflags=["-O3", "-march=native", "-fopenmp", f"-I{src}"],
        extra_ldflags=["-fopenmp"],
        build_directory=src,
    )


def blockwise_reference(x, w, scale):
    blocks = x.double().view(x.shape[0], -1, 64)
    s = blocks.abs().amax(2, keepdim=True) / 127
    q = torch.where(s > 0, torch.round(blocks / s).clamp(-127, 127), torch.zeros_like(blocks))
    return ((q * s).view_as(x.double()) @ w.double().T) * scale.double()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        mod = build(tmp)
        for m, k, n in [(1, 576, 960), (5, 1536, 576), (33, 576, 80)]:
            w = torch.randint(-127, 128, (n, k), dtype=torch.int8)
            scale = torch.rand(n) * 0.01
            x = torch.randn(m, k)
            want = blockwise_reference(x, w, scale)
            err = (mod.avx2_int8_linear(x, w, scale, None).double() - want).abs().max().item()
            assert err <= 1e-5 * want.abs().max().item(), err
        h, inter, kv, layers = 576, 1536, 192, 30
        shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)] * layers
        ws = [torch.randint(-127, 128, s, dtype=torch.int8) for s in shapes]
        ss = [torch.rand(s[0]) * 0.01 for s in shapes]
        for rows in (1, 2, 4, 8, 32):
            xs = {k: torch.randn(rows, k) for k in (h, inter)}
            times = {"int8_linear": [], "avx2_int8_linear": []}
            for _ in range(15):
                for name in times:
                    fn = getattr(mod, name)
                    start = time.perf_counter()
                    for w, s in zip(ws, ss, strict=True):
                        fn(xs[w.shape[1]], w, s, None)
                    times[name].append(time.perf_counter() - start)
            print(
                f"rows {rows:2d}: "
                + ", ".join(f"{n} {statistics.median(t) * 1e3:.2f} ms" for n, t in times.items()),
                flush=True,
            )


if __name__ == "__main__":
    main()
