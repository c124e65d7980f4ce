"""The C++ kernels at two git revisions, both built and loaded into one process, one engine each
(this checkout's Python), decode steps timed in turns: the engine-level sibling of
`kernel_ab.py`, for changes to the decoder stack or to what it calls, where the host's memory
speed moves more between two processes than the change does (BENCHMARKS.md, session 44).

Each round times a 512 MB `sum`, then `--steps` steps of one engine, then the same for the
other (the order alternating): the first step after the `sum` and the median of the steps after
it, per engine, and the median over rounds of each round's B / A - 1.

    .venv/bin/python benchmarks/stack_ab.py 1557707 WORKTREE [--mode int8] [--rows 1]
        [--rounds 150] [--steps 4] [--context 70]

WORKTREE means the files as they are in this checkout. Both revisions' kernels must take the
calls this checkout's Python makes. Their classes are registered `py::module_local` in the
copies built here (pybind11 refuses a second registration of the same C++ type otherwise).
What it resolves: one build in both engines (the same revision twice) reads within ±0.3 %; two
builds also place their code apart, and a change that cannot matter to the time (a view made
once a step instead of once a layer) read +0.5 to +2 % over four runs (session 44). Below ~2 %,
a switch inside one build (an environment variable read once a step) says more.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from types import ModuleType

import torch
from decoding import decoding_core

import roseinfer.backends as backends
from roseinfer.engine import InferenceEngine
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.kernels.build import KERNELS, load_kernels

ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIR = "roseinfer/kernels"
MODES = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}
CLASS = re.compile(r'py::class_<(roseinfer::\w+)>\(m, "(\w+)",')


def kernels_at(rev: str, dest: Path) -> ModuleType:
    """Build (or load the cached build of) the kernels at `rev` from a copy in `dest`."""
    dest.mkdir(parents=True)
    for name in KERNELS.sources + KERNELS.headers:
        if rev == "WORKTREE":
            text = (ROOT / KERNEL_DIR / name).read_text()
        else:
            text = subprocess.run(
                ["git", "show", f"{rev}:{KERNEL_DIR}/{name}"],
                cwd=ROOT, check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
        if name == "bindings.cpp":
            text = CLASS.sub(r'py::class_<\1>(m, "\2", py::module_local(),', text)
        (dest / name).write_text(text)
    return load_kernels(dataclasses.replace(KERNELS, src_dir=str(dest)))


def core_with(kernels: ModuleType, args: argparse.Namespace) -> LLMEngine:
    """An engine whose backend runs `kernels` (the loader asks `backends` for them)."""
    backends.load_cpu_kernels = lambda: kernels
    engine = InferenceEngine(model="smollm2", **MODES[args.mode])
    core = decoding_core(
        engine, args.rows, context=args.context,
        max_new_tokens=args.rounds * args.steps + 40,
    )  # fmt: skip
    stack = core.runner.decoder_stack
    if stack is None or type(stack.stack).__module__ != kernels.__name__:
        raise RuntimeError(f"the engine's decoder stack does not come from {kernels.__name__}")
    return core


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__)
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    parser.add_argument("--mode", choices=MODES, default="int8")
    parser.add_argument("--rows", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--context", type=int, default=70)
    args = parser.parse_args()
    if args.steps < 2 or args.rounds < 2:
        parser.error("--steps and --rounds must be >= 2")
    restore = backends.load_cpu_kernels
    with tempfile.TemporaryDirectory() as tmp:
        kernels = {
            "A": kernels_at(args.rev_a, Path(tmp) / "a"),
            "B": kernels_at(args.rev_b, Path(tmp) / "b"),
        }
        cores = {label: core_with(k, args) for label, k in kernels.items()}
    backends.load_cpu_kernels = restore
    a = torch.ones(128 * 1024 * 1024)
    for _ in range(10):
        for core in cores.values():
            core.step()
    first: dict[str, list[float]] = {"A": [], "B": []}
    after: dict[str, list[float]] = {"A": [], "B": []}
    bandwidths = []
    for r in range(args.rounds):
        for label in "AB" if r % 2 == 0 else "BA":
            start = time.perf_counter()
            a.sum()
            bandwidths.append(a.numel() * 4 / (time.perf_counter() - start) / 1e9)
            times = []
            for _ in range(args.steps):
                start = time.perf_counter()
                cores[label].step()
                times.append(time.perf_counter() - start)
            first[label].append(times[0])
            after[label].append(statistics.median(times[1:]))
    q = statistics.quantiles(bandwidths, n=4)
    print(f"A {args.rev_a}, B {args.rev_b}; {args.mode}, {args.rows} row(s) from {args.context} "
          f"keys; sum {statistics.median(bandwidths):.1f} GB/s ({q[0]:.1f}-{q[2]:.1f})")  # fmt: skip
    for label in "AB":
        print(f"  {label}: first step {statistics.median(first[label]) * 1e3:.3f} ms, "
              f"steps after it {statistics.median(after[label]) * 1e3:.3f} ms")  # fmt: skip
    for name, d in (("first step", first), ("steps after it", after)):
        change = statistics.median(b / a_ - 1 for a_, b in zip(d["A"], d["B"], strict=True))
        print(f"  B / A - 1, median of the rounds: {name} {change * 100:+.1f} %")


if __name__ == "__main__":
    main()
