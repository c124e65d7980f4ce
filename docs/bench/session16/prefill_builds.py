"""The prefill kernel at a base revision and in this tree, each built two ways: as the engine
builds it (every kernel source in one library, `roseinfer.kernels.build`) and alone
(`benchmarks/kernel_ab.py`'s single-file build). SmolLM2's 30 layers, one 512-token chunk after
1,488 cached tokens, fp32 cache. Two engine builds cannot share a process (their pybind types
collide), so each build is timed in a process of its own, the four taking turns, 3 rounds; each
figure is the median of 3 calls after a warm-up.

    .venv/bin/python docs/bench/session16/prefill_builds.py BASE_WORKTREE
"""

import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../benchmarks"))
import kernel_ab  # noqa: E402
from prefill_attention import block_tables  # noqa: E402

from roseinfer.kernels.build import KERNELS, load_kernels  # noqa: E402


def load(build: str, base: str, rev: str):
    if build == "base-engine":
        spec = dataclasses.replace(KERNELS, src_dir=os.path.join(base, "roseinfer/kernels"))
        return load_kernels(spec).paged_prefill_attention
    if build == "this-engine":
        return load_kernels(KERNELS).paged_prefill_attention
    tmp = tempfile.mkdtemp()
    return kernel_ab.build("prefill", rev if build == "base-alone" else "WORKTREE", tmp).attn


def time_one(fn) -> float:
    tables = block_tables(1, 512, 2000, shared=True)
    nb = int(tables.max()) + 1
    caches = [(torch.randn(nb, 3, 16, 64), torch.randn(nb, 3, 16, 64)) for _ in range(30)]
    q, qsl, lens = torch.randn(512, 9, 64), torch.tensor([0, 512]), torch.tensor([2000])
    times = []
    for r in range(4):  # the first call warms up
        t0 = time.perf_counter()
        for k, v in caches:
            fn(q, k, v, tables, qsl, lens, 0.125, None, None)
        if r:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    base = os.path.abspath(sys.argv[1])
    rev = subprocess.check_output(["git", "-C", base, "rev-parse", "--short", "HEAD"], text=True)
    rev = rev.strip()
    if len(sys.argv) > 2:  # one build, in this process
        print(f"{time_one(load(sys.argv[2], base, rev)) * 1e3:.1f}")
        return
    names = {"base-engine": f"{rev}, engine build", "this-engine": "this tree, engine build",
             "base-alone": f"{rev}, alone", "this-alone": "this tree, alone"}  # fmt: skip
    for r in range(3):
        for build, name in names.items():
            run = [sys.executable, __file__, base, build]
            out = subprocess.run(run, capture_output=True, text=True, check=True).stdout
            print(f"round {r + 1}, 1x512@2000 fp32, {name}: {out.strip()} ms", flush=True)


if __name__ == "__main__":
    main()
