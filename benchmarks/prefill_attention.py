"""Prefill attention alone, as SmolLM2-135M's 30 layers run it: the reference path (a fresh
chunk through causal SDPA; chunks after cached tokens gather their sequences' blocks and run SDPA
with a mask) against the C++ kernel reading the paged cache in place. Each shape is
`SxQ@C`: S sequences with Q new tokens each and C tokens in all (C - Q cached); with
`--shared-prefix` the sequences' cached blocks are the same ones (a prefix-cache hit). Milliseconds
for the 30 layers, median of `--repeats`, the paths in turns (`--tiles`: the kernel's tiles, each
timed; "auto" is the one the engine takes).

    .venv/bin/python benchmarks/prefill_attention.py --shapes 1x512@2000,16x32@1024 --shared-prefix
    .venv/bin/python benchmarks/prefill_attention.py --dtype bfloat16 --tiles pairs,amx
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.attention import AttentionMetadata, attend_group, attention_group
from roseinfer.layers.kv_cache import LayerCache

LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK = 30, 9, 3, 64, 16


def parse_shape(text: str) -> tuple[int, int, int]:
    seqs, rest = text.split("x")
    queries, context = rest.split("@")
    s, q, c = int(seqs), int(queries), int(context)
    if not 1 <= q <= c:
        raise argparse.ArgumentTypeError(f"{text}: need 1 <= Q <= C")
    return s, q, c


def block_tables(seqs: int, queries: int, context: int, shared: bool) -> torch.Tensor:
    """[seqs, blocks]: scattered blocks; with `shared`, the cached full blocks are common."""
    blocks = -(-context // BLOCK)
    common = (context - queries) // BLOCK if shared else 0
    ids = torch.randperm(common + seqs * (blocks - common))
    own = ids[common:].view(seqs, blocks - common)
    return torch.cat([ids[:common].expand(seqs, common), own], dim=1).contiguous()


def run_reference(caches, q, k, group, scale) -> None:
    for c in caches:
        attend_group(q, k, k, c, group, scale)


def run_kernel(kernels, caches, q, table, qsl, ctx_lens, scale, tile) -> None:
    for c in caches:
        kernels.paged_prefill_attention(q, c.k, c.v, table, qsl, ctx_lens, scale, tile=tile)


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", type=lambda t: [parse_shape(s) for s in t.split(",")],
                   default=[parse_shape("1x512@2000"), parse_shape("16x32@1024")])  # fmt: skip
    p.add_argument("--shared-prefix", action="store_true")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--tiles", type=lambda t: list(dict.fromkeys(t.split(","))), default=["auto"],
                   help="the kernel's tiles to time, in turns: auto, fp32, pairs, amx")  # fmt: skip
    args = p.parse_args()
    if "reference" in args.tiles:
        p.error("--tiles: the reference path is always timed; name the kernel's tiles")
    kernels = load_cpu_kernels()
    assert kernels is not None, "the C++ kernels do not build here"
    dtype = getattr(torch, args.dtype)
    scale = HEAD_DIM**-0.5
    torch.manual_seed(0)
    for seqs, queries, context in args.shapes:
        table = block_tables(seqs, queries, context, args.shared_prefix)
        num_blocks = int(table.max()) + 1
        caches = [
            LayerCache(torch.randn(num_blocks, KV_HEADS, BLOCK, HEAD_DIM).to(dtype),
                       torch.randn(num_blocks, KV_HEADS, BLOCK, HEAD_DIM).to(dtype))
            for _ in range(LAYERS)
        ]  # fmt: skip
        n = seqs * queries
        q = torch.randn(n, HEADS, HEAD_DIM).to(dtype)
        k = torch.randn(n, KV_HEADS, HEAD_DIM).to(dtype)
        qsl = torch.arange(seqs + 1) * queries
        ctx = torch.full((seqs,), context)
        meta = AttentionMetadata(
            query_start_loc=qsl, context_lens=ctx, slot_mapping=torch.zeros(n, dtype=torch.long),
            block_tables=table, query_lens=[queries] * seqs, context_lens_host=[context] * seqs,
            num_decode_seqs=0, block_size=BLOCK,
        )  # fmt: skip
        group = attention_group(meta, 0, seqs, slice(0, n))

        reference = functools.partial(run_reference, caches, q, k, group, scale)
        runs: dict[str, tuple[Callable[[], None], list[float]]] = {"reference": (reference, [])}
        for tile in args.tiles:
            kernel = functools.partial(run_kernel, kernels, caches, q, table, qsl, ctx, scale, tile)
            runs[tile] = (kernel, [])
        for r in range(args.repeats + 1):  # in turns; the first round warms up
            for fn, times in runs.values():
                t0 = time.perf_counter()
                fn()
                if r:
                    times.append(time.perf_counter() - t0)
        ms = {name: 1e3 * statistics.median(times) for name, (_, times) in runs.items()}
        kernels_ms = ", ".join(
            f"kernel {tile} {ms[tile]:.1f} ms ({ms['reference'] / ms[tile]:.2f}x)"
            for tile in args.tiles
        )
        print(f"{seqs}x{queries}@{context} {args.dtype}"
              f"{' shared' if args.shared_prefix else ''}: reference {ms['reference']:.1f} ms, "
              f"{kernels_ms}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
