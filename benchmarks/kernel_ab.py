"""One C++ kernel file (with the kernels' headers) at two git revisions, built side by side into
one process and timed in turns. `linears`: small_batch_linear and int8_linear over SmolLM2's 120
decode linears (random weights, 30 layers, DRAM-cold), aten's fp32 linear beside them;
`attention`: paged_decode_attention over 30 layers' caches (random scattered blocks; fp32, bf16
and int8 caches), cold (the layers in turn), evicted (a layer's weights read between the calls,
only the calls timed) and warm (one layer's call repeated), for BxKEYS batches (default
1x135,1x500,32x135,32x500);
`dpbf16`: dpbf16_linear and dpbf16_gated_linear (SiLU * up) over SmolLM2's 120 linears in bf16
(random weights, 30 layers) at M rows (prefill chunks: 512, 2,000), each linear's time and
whether each revision's output is bit-identical to the first revision's;
`amx`: amx_linear and amx_int8_linear over SmolLM2's 120 linears (random weights, 30 layers) at M
rows (prefill chunks: 512), and its 30 gate_up packed gated with SiLU·mul in the epilogue
(`amx_gated_linear`, bf16 and int8), each kind's time and whether each revision's output is
bit-identical to the first revision's;
`prefill`: paged_prefill_attention over 30 layers for SxQ@C steps (S sequences of Q new tokens
in C; the cached blocks shared, as after a prefix-cache hit; `benchmarks/prefill_attention.py`'s
shapes), fp32, bf16 and int8 caches, and whether each revision's output for the first layer is
bit-identical to the first revision's.

    .venv/bin/python benchmarks/kernel_ab.py linears a3cf196 WORKTREE 1,2,4,8,32
    .venv/bin/python benchmarks/kernel_ab.py attention b14f4f3 WORKTREE [1x135,1x500,32x135]
    .venv/bin/python benchmarks/kernel_ab.py dpbf16 HEAD WORKTREE [512,2000]
    .venv/bin/python benchmarks/kernel_ab.py amx HEAD WORKTREE [512,2000]
    .venv/bin/python benchmarks/kernel_ab.py prefill 9bc641d WORKTREE [1x512@2000,16x32@1024]

WORKTREE means the files as they are in this checkout. `prefill` takes PREFILL_CACHES (default
"float32,bfloat16,int8": the caches to time), PREFILL_REPS (default 6 turns, the first not
counted) and PREFILL_TILE (default "auto"; "pairs" times the AVX512-BF16 hosts' tile on an AMX
CPU too) from the environment; `attention` takes ATTENTION_HEADS (default "9,3,64": query heads,
KV heads, head_dim) and ATTENTION_CACHES (default "float32,bfloat16,int8").
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from prefill_attention import block_tables, parse_shape
from torch.utils.cpp_extension import load

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
KERNELS = "roseinfer/kernels"
SOURCES = {
    "linears": (
        "int8_linear.cpp",
        """torch::Tensor int8_linear(torch::Tensor x, torch::Tensor weight, torch::Tensor scale,
                          c10::optional<torch::Tensor> bias);
torch::Tensor small_batch_linear(torch::Tensor x, torch::Tensor weight,
                                 c10::optional<torch::Tensor> bias);""",
        'm.def("int8_linear", &roseinfer::int8_linear); '
        'm.def("small_batch_linear", &roseinfer::small_batch_linear);',
    ),
    "attention": (
        "paged_attention.cpp",
        """torch::Tensor paged_decode_attention(torch::Tensor q, torch::Tensor k, torch::Tensor v,
    torch::Tensor k_cache, torch::Tensor v_cache, torch::Tensor slot_mapping,
    torch::Tensor block_tables, torch::Tensor context_lens, double scale,
    c10::optional<torch::Tensor> k_scale, c10::optional<torch::Tensor> v_scale,
    c10::optional<torch::Tensor> out);""",
        'm.def("attn", [](torch::Tensor q, torch::Tensor k, torch::Tensor v, torch::Tensor kc, '
        "torch::Tensor vc, torch::Tensor slots, torch::Tensor tables, torch::Tensor lens, "
        "double scale, c10::optional<torch::Tensor> ks, c10::optional<torch::Tensor> vs) { "
        "return roseinfer::paged_decode_attention(q, k, v, kc, vc, slots, tables, lens, scale, "
        "ks, vs, c10::nullopt); });",
    ),
    "dpbf16": (
        "dpbf16_linear.cpp",
        """torch::Tensor dpbf16_pack_weight(torch::Tensor w);
torch::Tensor dpbf16_pack_gated(torch::Tensor w);
torch::Tensor dpbf16_linear(torch::Tensor x, torch::Tensor packed,
    c10::optional<torch::Tensor> bias, c10::optional<torch::Tensor> out);
torch::Tensor dpbf16_gated_linear(torch::Tensor x, torch::Tensor packed,
    c10::optional<torch::Tensor> bias, bool silu_mul, c10::optional<torch::Tensor> out);""",
        'm.def("pack", &roseinfer::dpbf16_pack_weight); '
        'm.def("pack_gated", &roseinfer::dpbf16_pack_gated); '
        'm.def("linear", [](torch::Tensor x, torch::Tensor w) { '
        "return roseinfer::dpbf16_linear(x, w, c10::nullopt, c10::nullopt); }); "
        'm.def("gated", [](torch::Tensor x, torch::Tensor w) { '
        "return roseinfer::dpbf16_gated_linear(x, w, c10::nullopt, true, c10::nullopt); });",
    ),
    "amx": (
        "amx_linear.cpp",
        """torch::Tensor amx_pack_weight(torch::Tensor w);
torch::Tensor amx_linear(torch::Tensor x, torch::Tensor packed, c10::optional<torch::Tensor> bias,
    c10::optional<torch::Tensor> out);
torch::Tensor amx_int8_linear(torch::Tensor x, torch::Tensor packed, torch::Tensor scale,
    c10::optional<torch::Tensor> bias, c10::optional<torch::Tensor> out);
torch::Tensor amx_pack_gated(torch::Tensor w);
torch::Tensor amx_gated_linear(torch::Tensor x, torch::Tensor packed,
    c10::optional<torch::Tensor> scale, c10::optional<torch::Tensor> bias, bool silu_mul,
    c10::optional<torch::Tensor> out);""",
        'm.def("pack", &roseinfer::amx_pack_weight); '
        'm.def("pack_gated", &roseinfer::amx_pack_gated); '
        'm.def("gated", [](torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> s) { '
        "return roseinfer::amx_gated_linear(x, w, s, c10::nullopt, true, c10::nullopt); }); "
        'm.def("linear", [](torch::Tensor x, torch::Tensor w) { '
        "return roseinfer::amx_linear(x, w, c10::nullopt, c10::nullopt); }); "
        'm.def("int8", [](torch::Tensor x, torch::Tensor w, torch::Tensor s) { '
        "return roseinfer::amx_int8_linear(x, w, s, c10::nullopt, c10::nullopt); });",
    ),
    "prefill": (
        "prefill_attention.cpp",
        """torch::Tensor paged_prefill_attention(torch::Tensor q, torch::Tensor k_cache,
    torch::Tensor v_cache, torch::Tensor block_tables, torch::Tensor query_start_loc,
    torch::Tensor context_lens, double scale, c10::optional<torch::Tensor> k_scale,
    c10::optional<torch::Tensor> v_scale, const std::string& tile);""",
        'm.def("attn", [](torch::Tensor q, torch::Tensor k, torch::Tensor v, torch::Tensor t, '
        "torch::Tensor qsl, torch::Tensor lens, double scale, c10::optional<torch::Tensor> ks, "
        "c10::optional<torch::Tensor> vs, const std::string& tile) { "
        "return roseinfer::paged_prefill_attention(q, k, v, t, qsl, lens, scale, ks, vs, tile); "
        "});",
    ),
}


def build(which: str, rev: str, tmp: str):
    src, decl, defs = SOURCES[which]
    d = os.path.join(tmp, rev)
    os.makedirs(d, exist_ok=True)
    if rev == "WORKTREE":
        names = os.listdir(os.path.join(ROOT, KERNELS))
    else:
        listing = ["git", "-C", ROOT, "ls-tree", "--name-only", f"{rev}:{KERNELS}"]
        names = subprocess.check_output(listing, text=True).split()
    for name in [src] + [n for n in names if n.endswith(".h")]:
        path = f"{KERNELS}/{name}"
        if rev == "WORKTREE":
            with open(os.path.join(ROOT, path)) as f:
                text = f.read()
        else:
            text = subprocess.check_output(["git", "-C", ROOT, "show", f"{rev}:{path}"], text=True)
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    with open(os.path.join(d, "bind.cpp"), "w") as f:
        f.write(f"#include <torch/extension.h>\nnamespace roseinfer {{\n{decl}\n}}\n")
        f.write(f"PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ {defs} }}\n")
    return load(
        f"ab_{which}_{rev}".replace("-", "_"),
        [os.path.join(d, "bind.cpp"), os.path.join(d, src)],
        extra_cflags=["-O3", "-march=native", "-fopenmp", f"-I{d}"],
        extra_ldflags=["-fopenmp"],
        build_directory=d,
    )


def turns(mods, fns, reps):
    """Median seconds of fns[name](mod) per module, the modules taking turns: the call's time,
    or the seconds it returns where it times its own part."""
    times = {}
    for _ in range(reps):
        for rev, mod in mods.items():
            for name, fn in fns.items():
                t = time.perf_counter()
                timed = fn(mod)
                seconds = timed if isinstance(timed, float) else time.perf_counter() - t
                times.setdefault((rev, name), []).append(seconds)
    return {key: statistics.median(v[1:]) for key, v in times.items()}


def linears(mods, rows):
    h, inter, kv, layers = 576, 1536, 192, 30
    shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]
    weights = {
        dt: [torch.randn(n, k, dtype=dt) * 0.02 for _ in range(layers) for n, k in shapes]
        for dt in (torch.float32, torch.bfloat16)
    }
    qweights = [
        torch.randint(-127, 128, (n, k), dtype=torch.int8) for _ in range(layers) for n, k in shapes
    ]
    scales = {n: torch.rand(n) * 0.01 for n, _ in shapes}
    for m in rows:
        xs = {
            (k, dt): torch.randn(m, k).to(dt)
            for k in (h, inter)
            for dt in (torch.float32, torch.bfloat16)
        }
        fns = {
            "fp32": lambda mod, xs=xs: [
                mod.small_batch_linear(xs[(w.shape[1], w.dtype)], w, None)
                for w in weights[torch.float32]
            ],
            "bf16": lambda mod, xs=xs: [
                mod.small_batch_linear(xs[(w.shape[1], w.dtype)], w, None)
                for w in weights[torch.bfloat16]
            ],
            "int8": lambda mod, xs=xs: [
                mod.int8_linear(xs[(w.shape[1], torch.float32)], w, scales[w.shape[0]], None)
                for w in qweights
            ],
            # aten's fp32 linear (MKL's sgemm: what the layers run past their kernel's rows),
            # the same at both revisions: timed in the same turns as a yardstick.
            "aten-fp32": lambda mod, xs=xs: [
                torch.nn.functional.linear(xs[(w.shape[1], w.dtype)], w)
                for w in weights[torch.float32]
            ],
        }
        res = turns(mods, fns, 15)
        for rev in mods:
            print(
                f"rows {m:3d} {rev:>9}: "
                + "  ".join(f"{n} {res[(rev, n)] * 1e3:6.2f} ms" for n in fns),
                flush=True,
            )


def dpbf16(mods, rows):
    h, inter, kv, layers = 576, 1536, 192, 30
    names = ["qkv", "o", "gate_up", "down"]
    shapes = dict(zip(names, [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)], strict=True))
    g = torch.Generator().manual_seed(0)
    weights = {
        name: [(torch.randn(n, k, generator=g) * 0.02).to(torch.bfloat16) for _ in range(layers)]
        for name, (n, k) in shapes.items()
    }
    any_mod = next(iter(mods.values()))  # the packed layouts are the same at both revisions
    packed = {
        name: [(any_mod.pack_gated if name == "gate_up" else any_mod.pack)(w) for w in ws]
        for name, ws in weights.items()
    }
    for m in rows:
        xs = {k: torch.randn(m, k, generator=g).to(torch.bfloat16) for k in (h, inter)}

        def run(name, x):
            call = "gated" if name == "gate_up" else "linear"
            return lambda module: [getattr(module, call)(x, w) for w in packed[name]]

        fns = {name: run(name, xs[shapes[name][1]]) for name in names}
        res = turns(mods, fns, 9)
        outs = {rev: [fns[n](mod)[0] for n in names] for rev, mod in mods.items()}
        first = next(iter(outs.values()))
        for rev in mods:
            same = all(torch.equal(a, b) for a, b in zip(outs[rev], first, strict=True))
            total = sum(res[(rev, n)] for n in names)
            print(
                f"rows {m:4d} {rev:>9}: "
                + "  ".join(f"{n} {res[(rev, n)] * 1e3:6.1f} ms" for n in names)
                + f"  all {total * 1e3:6.1f} ms, {'bit-identical' if same else 'DIFFERENT'}",
                flush=True,
            )


def amx(mods, rows):
    h, inter, kv, layers = 576, 1536, 192, 30
    shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]
    g = torch.Generator().manual_seed(0)
    weights = [
        (torch.randn(n, k, generator=g) * 0.02).to(torch.bfloat16)
        for _ in range(layers)
        for n, k in shapes
    ]
    any_mod = next(iter(mods.values()))  # the packed layout is the same at both revisions
    bf16 = [any_mod.pack(w) for w in weights]
    int8 = [any_mod.pack(torch.randint(-127, 128, w.shape, dtype=torch.int8)) for w in weights]
    scales = [torch.rand(w.shape[0], generator=g).to(torch.bfloat16) / 64 for w in weights]
    gate_up = weights[2::4]  # each layer's [2I, h], packed gated for SiLU·mul in the epilogue
    bf16_gated = [any_mod.pack_gated(w) for w in gate_up]
    int8_gated = [
        any_mod.pack_gated(torch.randint(-127, 128, w.shape, dtype=torch.int8)) for w in gate_up
    ]
    gated_scales = scales[2::4]
    for m in rows:
        xs = {k: torch.randn(m, k, generator=g).to(torch.bfloat16) for k in (h, inter)}
        fns = {
            "bf16": lambda mod, xs=xs: [mod.linear(xs[w.shape[1] * 32], w) for w in bf16],
            "int8": lambda mod, xs=xs: [
                mod.int8(xs[w.shape[1] * 32], w, s) for w, s in zip(int8, scales, strict=True)
            ],
            "bf16 gate_up+SiLU": lambda mod, xs=xs: [mod.gated(xs[h], w, None) for w in bf16_gated],
            "int8 gate_up+SiLU": lambda mod, xs=xs: [
                mod.gated(xs[h], w, s) for w, s in zip(int8_gated, gated_scales, strict=True)
            ],
        }
        res = turns(mods, fns, 9)
        outs = {rev: [f(mod)[2] for f in fns.values()] for rev, mod in mods.items()}
        first = next(iter(outs.values()))
        for rev in mods:
            same = all(torch.equal(a, b) for a, b in zip(outs[rev], first, strict=True))
            print(
                f"rows {m:4d} {rev:>9}: "
                + "  ".join(f"{n} {res[(rev, n)] * 1e3:6.1f} ms" for n in fns)
                + f"  {'bit-identical' if same else 'DIFFERENT'}",
                flush=True,
            )


def attention(mods, shapes):
    heads, kv_heads, dim = (int(v) for v in os.environ.get("ATTENTION_HEADS", "9,3,64").split(","))
    bs = 16

    def case(b, length, dtype, seed):
        g = torch.Generator().manual_seed(seed)
        per = -(-length // bs)
        nb = b * per + 4
        scales = (None, None)
        if dtype == "int8":  # an int8 cache (contents random: the kernel's time does not care)
            dtype = torch.bfloat16
            kc, vc = (
                torch.randint(-127, 128, (nb, kv_heads, bs, dim), dtype=torch.int8, generator=g)
                for _ in range(2)
            )
            scales = tuple(torch.rand(nb, kv_heads, bs, generator=g) / 64 for _ in range(2))
        else:
            kc, vc = (torch.randn(nb, kv_heads, bs, dim, generator=g).to(dtype) for _ in range(2))
        tables = torch.randperm(nb, generator=g)[: b * per].view(b, per)
        q = torch.randn(b, heads, dim, generator=g).to(dtype)
        k, v = (torch.randn(b, kv_heads, dim, generator=g).to(dtype) for _ in range(2))
        lens = torch.full((b,), length)
        slots = tables[:, (length - 1) // bs] * bs + (length - 1) % bs
        return q, k, v, kc, vc, slots, tables, lens, dim**-0.5, *scales

    # A layer's int8 weights (3.5 MB) read between two layers' calls, as a decode step does:
    # the 30 layers' K/V alone (a few MB at one sequence) would stay in L3 from call to call.
    weights = torch.ones(40 << 20)  # 160 MB, more than any L3 here
    layer_bytes = 3_500_000 // 4

    def evicted(mod, layers):
        seconds = 0.0
        for i, c in enumerate(layers):
            at = i * layer_bytes
            weights[at : at + layer_bytes].sum()
            t = time.perf_counter()
            mod.attn(*c)
            seconds += time.perf_counter() - t
        return seconds

    for b, length in shapes:
        for dtype in os.environ.get("ATTENTION_CACHES", "float32,bfloat16,int8").split(","):
            dtype = getattr(torch, dtype) if dtype != "int8" else dtype
            layers = [case(b, length, dtype, seed) for seed in range(30)]
            fns = {
                "cold": lambda mod, layers=layers: [mod.attn(*c) for c in layers],
                "evicted": lambda mod, layers=layers: evicted(mod, layers),
                "warm": lambda mod, layers=layers: [mod.attn(*layers[0]) for _ in layers],
            }
            res = turns(mods, fns, 9)
            for rev in mods:
                print(
                    f"batch {b:2d} x {length} keys {str(dtype).removeprefix('torch.'):>8} {rev:>9}: "
                    + "  ".join(f"{n} {res[(rev, n)] * 1e3:6.2f} ms" for n in fns),
                    flush=True,
                )


def prefill(mods, shapes):
    heads, kv_heads, dim, bs, layers = 9, 3, 64, 16, 30
    tile = os.environ.get("PREFILL_TILE", "auto")
    for seqs, queries, context in shapes:
        g = torch.Generator().manual_seed(0)
        tables = block_tables(seqs, queries, context, shared=True)
        nb = int(tables.max()) + 1
        qsl, lens = torch.arange(seqs + 1) * queries, torch.full((seqs,), context)
        cache_names = os.environ.get("PREFILL_CACHES", "float32,bfloat16,int8").split(",")
        for dtype in [torch.float32 if c == "float32" else torch.bfloat16 if c == "bfloat16" else c
                      for c in cache_names]:  # fmt: skip
            scales = [(None, None)] * layers
            if dtype == "int8":  # contents random: the kernel's time does not care
                dtype = torch.bfloat16
                caches = [
                    tuple(
                        torch.randint(-127, 128, (nb, kv_heads, bs, dim), dtype=torch.int8,
                                      generator=g)
                        for _ in range(2)
                    )
                    for _ in range(layers)
                ]  # fmt: skip
                scales = [
                    tuple(torch.rand(nb, kv_heads, bs, generator=g) / 64 for _ in range(2))
                    for _ in range(layers)
                ]
                name = "int8"
            else:
                caches = [
                    tuple(torch.randn(nb, kv_heads, bs, dim, generator=g).to(dtype)
                          for _ in range(2))
                    for _ in range(layers)
                ]  # fmt: skip
                name = str(dtype).removeprefix("torch.")
            q = torch.randn(seqs * queries, heads, dim, generator=g).to(dtype)
            args = [
                (q, *c, tables, qsl, lens, dim**-0.5, *s)
                for c, s in zip(caches, scales, strict=True)
            ]
            reps = int(os.environ.get("PREFILL_REPS", "6"))
            res = turns(mods, {"": lambda mod, args=args: [mod.attn(*a, tile) for a in args]}, reps)
            outs = {rev: mod.attn(*args[0], tile).float() for rev, mod in mods.items()}
            first = next(iter(outs.values()))
            for rev in mods:
                diff = (outs[rev] - first).abs().max().item()
                same = "bit-identical" if torch.equal(outs[rev], first) else f"max diff {diff:.3g}"
                print(f"{seqs}x{queries}@{context} {name:>8} {rev:>9}: "
                      f"{res[(rev, '')] * 1e3:7.1f} ms, layer 0 {same}", flush=True)  # fmt: skip


if __name__ == "__main__":
    which, base, new = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        mods = {rev: build(which, rev, tmp) for rev in (base, new)}
        if which == "linears":
            linears(mods, [int(r) for r in sys.argv[4].split(",")])
        elif which == "amx":
            amx(mods, [int(r) for r in (sys.argv[4] if len(sys.argv) > 4 else "512").split(",")])
        elif which == "dpbf16":
            dpbf16(mods, [int(r) for r in (sys.argv[4] if len(sys.argv) > 4 else "512").split(",")])
        elif which == "prefill":
            shapes = sys.argv[4] if len(sys.argv) > 4 else "1x512@512,1x512@2000,16x32@1024"
            prefill(mods, [parse_shape(s) for s in shapes.split(",")])
        else:
            shapes = sys.argv[4] if len(sys.argv) > 4 else "1x135,1x500,32x135,32x500"
            attention(mods, [tuple(int(n) for n in s.split("x")) for s in shapes.split(",")])
