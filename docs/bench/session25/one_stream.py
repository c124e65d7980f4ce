"""Where one stream's decode step goes against this host's weight-read floor (issue 22's goal:
within 1.25x of it), for bf16 and int8 weights (and int8 with the int8 cache), in one process
and in turns. Session 15's script for an AVX512-BF16 host: the streams through the kernels these
modes run there (`dpbf16_linear`, `vnni_int8_linear`).

- the floor: SmolLM2's decode weights (120 linears and the LM head) over the read bandwidth of
  a plain `sum` of 512 MB (as `benchmarks/cpu_floor.py`);
- the stream: the same weights (random) through the engine's own kernels as a step calls them,
  120 calls plus the LM head, and as one call over all of their rows;
- the engine: median decode step at batch 1 (a `--context`-token prompt) and its phases: the
  decoder stack (`model.forward`), the LM head (`compute_logits`), sampling, the rest.

    PYTHONPATH=. .venv/bin/python docs/bench/session25/one_stream.py [--context 70] [--steps 60]
"""

import argparse
import collections
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.kernels import load_cpu_kernels  # noqa: E402

H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
MODES = {
    "bf16": ({"dtype": "bfloat16"}, "auto"),
    "int8": ({"quantization": "int8"}, "auto"),
    "int8+kv8": ({"quantization": "int8"}, "int8"),
}


def kernel_streams(k):
    """mode -> (weight bytes, a step's 121 calls, one call over the rows of width 576 and their
    bytes), the calls as functions to time."""
    out = {}
    x = {K: torch.randn(1, K).bfloat16() for K in (H, INTER)}
    ws = [torch.randn(s).bfloat16() * 0.02 for s in SHAPES + [(V, H)]]
    packed = [k.dpbf16_pack_weight(w) for w in ws]
    one = k.dpbf16_pack_weight(torch.cat([w for w in ws if w.shape[1] == H]))

    def calls(x=x):
        return [k.dpbf16_linear(x[p.shape[1] * 2], p) for p in packed]

    def whole(x=x):
        return k.dpbf16_linear(x[H], one)

    nbytes = sum(w.numel() * 2 for w in ws)
    out["bf16"] = (nbytes, calls, whole, one.numel() * 2)
    qs = [torch.randint(-127, 128, s, dtype=torch.int8) for s in SHAPES + [(V, H)]]
    scales = [torch.rand(q.shape[0]).bfloat16() / 64 for q in qs]
    vnni = [k.vnni_pack_weight(q) for q in qs]
    wide = [i for i, q in enumerate(qs) if q.shape[1] == H]
    one8 = k.vnni_pack_weight(torch.cat([qs[i] for i in wide]))
    one8_scale = torch.cat([scales[i] for i in wide])

    def calls8(x=x):
        return [
            k.vnni_int8_linear(x[p.shape[1] * 4], p, s) for p, s in zip(vnni, scales, strict=True)
        ]

    def whole8(x=x):
        return k.vnni_int8_linear(x[H], one8, one8_scale)

    out["int8"] = out["int8+kv8"] = (sum(q.numel() for q in qs), calls8, whole8, one8.numel())
    return out


def timed(fns: dict, reps: int) -> dict:
    times = collections.defaultdict(list)
    for _ in range(reps):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return {key: statistics.median(v) for key, v in times.items()}


def engine_phases(context: int, steps: int) -> dict:
    """mode -> {phase: median ms}, the modes' engines stepping in turns."""
    cores, phases = {}, {}
    for mode, (options, kv) in MODES.items():
        engine = InferenceEngine(model="smollm2", **options)
        core = decoding_core(engine, 1, context=context, kv_cache_dtype=kv)
        times = phases[mode] = collections.defaultdict(list)
        runner = core.runner

        def wrap(obj, name, label, times=times):
            fn = getattr(obj, name)

            def timed_call(*args, **kwargs):
                start = time.perf_counter()
                result = fn(*args, **kwargs)
                times[label].append(time.perf_counter() - start)
                return result

            setattr(obj, name, timed_call)

        wrap(runner.model, "compute_logits", "LM head")
        wrap(runner.model, "forward", "decoder stack")
        wrap(runner, "sample", "sampling")
        cores[mode] = core
    for _ in range(10):
        for core in cores.values():
            core.step()
    for t in phases.values():
        t.clear()
    for _ in range(steps):
        for mode, core in cores.items():
            start = time.perf_counter()
            core.step()
            phases[mode]["step"].append(time.perf_counter() - start)
    return {m: {p: statistics.median(v) * 1e3 for p, v in t.items()} for m, t in phases.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--context", type=int, default=70)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    k = load_cpu_kernels()
    assert k is not None, "the C++ kernels did not build"
    a = torch.ones(128 * 1024 * 1024)
    streams = kernel_streams(k)
    fns = {"sum": lambda: a.sum()}
    for mode, (_, calls, whole, _) in streams.items():
        if mode != "int8+kv8":  # int8's weights
            fns[(mode, "calls")] = calls
            fns[(mode, "one call")] = whole
    med = timed(fns, 15)
    bandwidth = a.numel() * 4 / med["sum"] / 1e9
    print(f"read bandwidth (sum of 512 MB): {bandwidth:.1f} GB/s", flush=True)
    phases = engine_phases(args.context, args.steps)
    for mode, (nbytes, _, _, one_bytes) in streams.items():
        floor = nbytes / bandwidth / 1e6
        weights = "int8" if mode == "int8+kv8" else mode
        calls, one = med[(weights, "calls")] * 1e3, med[(weights, "one call")] * 1e3
        p = phases[mode]
        rest = p["step"] - p["decoder stack"] - p["LM head"] - p["sampling"]
        print(
            f"{mode}: weights {nbytes / 1e6:.0f} MB, floor {floor:.2f} ms | kernels: 121 calls "
            f"{calls:.2f} ms ({nbytes / calls / 1e6:.1f} GB/s), one call {one:.2f} ms "
            f"({one_bytes / one / 1e6:.1f} GB/s) | engine step {p['step']:.2f} ms = "
            f"{p['step'] / floor:.2f}x floor: decoder stack {p['decoder stack']:.2f}, LM head "
            f"{p['LM head']:.2f}, sampling {p['sampling']:.2f}, rest {rest:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
