"""Prefill attention alone, as SmolLM2-135M's 30 layers run it for one long prompt in chunks
(`--chunk` tokens per step, as --max-num-batched-tokens splits it): the reference path (a fresh
chunk through causal SDPA; a later chunk gathers its sequence's blocks and runs SDPA with a mask)
against the C++ kernel reading the paged cache in place. Per chunk and for the whole prompt,
milliseconds for the 30 layers, median of `--repeats`.

    .venv/bin/python benchmarks/prefill_attention.py --prompt 2000 --chunk 512 --dtype float32
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.attention import AttentionMetadata, attend_group, attention_group
from roseinfer.layers.kv_cache import LayerCache

LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK = 30, 9, 3, 64, 16


def run_reference(caches, q, k, group, scale) -> None:
    for kc, vc in caches:
        attend_group(q, k, k, LayerCache(kc, vc), group, scale)


def run_kernel(kernels, caches, q, table, qsl, ctx_lens, scale) -> None:
    for kc, vc in caches:
        kernels.paged_prefill_attention(q, kc, vc, table, qsl, ctx_lens, scale)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompt", type=int, default=2000)
    p.add_argument("--chunk", type=int, default=512)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    kernels = load_cpu_kernels()
    assert kernels is not None, "the C++ kernels do not build here"
    dtype = getattr(torch, args.dtype)
    torch.manual_seed(0)
    num_blocks = -(-args.prompt // BLOCK)
    caches = [
        (torch.randn(num_blocks, KV_HEADS, BLOCK, HEAD_DIM).to(dtype),
         torch.randn(num_blocks, KV_HEADS, BLOCK, HEAD_DIM).to(dtype))
        for _ in range(LAYERS)
    ]  # fmt: skip
    table = torch.randperm(num_blocks)[None]  # the prompt's blocks, scattered
    scale = HEAD_DIM**-0.5
    totals = {"reference": 0.0, "kernel": 0.0}
    for start in range(0, args.prompt, args.chunk):
        n = min(args.chunk, args.prompt - start)
        ctx = start + n
        q = torch.randn(n, HEADS, HEAD_DIM).to(dtype)
        k = torch.randn(n, KV_HEADS, HEAD_DIM).to(dtype)
        meta = AttentionMetadata(
            query_start_loc=torch.tensor([0, n]), context_lens=torch.tensor([ctx]),
            slot_mapping=torch.zeros(n, dtype=torch.long), block_tables=table,
            query_lens=[n], context_lens_host=[ctx], num_decode_seqs=0, block_size=BLOCK,
        )  # fmt: skip
        group = attention_group(meta, 0, 1, slice(0, n))
        qsl, ctx_lens = torch.tensor([0, n]), torch.tensor([ctx])
        reference = functools.partial(run_reference, caches, q, k, group, scale)
        kernel = functools.partial(run_kernel, kernels, caches, q, table, qsl, ctx_lens, scale)
        row = []
        for name, fn in (("reference", reference), ("kernel", kernel)):
            fn()
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            ms = 1e3 * statistics.median(times)
            totals[name] += ms
            row.append(f"{name} {ms:.1f} ms")
        kind = "fresh" if start == 0 else f"after {start} cached"
        print(f"chunk {n} tokens ({kind}): " + ", ".join(row), flush=True)
    print(f"whole prompt ({args.prompt} tokens, {args.dtype}): "
          + ", ".join(f"{k} {v:.0f} ms" for k, v in totals.items()))  # fmt: skip


if __name__ == "__main__":
    main()
