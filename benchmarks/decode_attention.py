"""The C++ paged decode-attention kernel alone, as one decode step of SmolLM2-135M runs it: 30
layers, each with its own bf16 cache, `--batch-size` sequences of `--context` tokens.

    .venv/bin/python benchmarks/decode_attention.py --batch-size 32 --context 135

"scattered": each sequence's blocks are drawn at random from the whole cache (the worst case);
"contiguous": a sequence's blocks are adjacent; "admitted together": as the block manager lays
out a batch admitted at once from a fresh free list (each prompt's 70 tokens in adjacent blocks,
then the decode blocks taken in turn by all sequences, so a sequence's later blocks lie
`batch-size` blocks apart); "warm": one layer's call repeated,
its K/V already in cache, which shows the kernel's compute cost without memory stalls; "mixed
lengths": contiguous blocks, half the sequences at `--context` tokens and half at an eighth of
it (the kernel splits its work among threads by keys, not by sequences). Each line
is the best of 5 medians of 10 steps. `--kv-cache-dtype int8`: the caches in int8 with a scale per
(token, KV head) row, as `roseinfer serve --kv-cache-dtype int8` keeps them.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import quantize_rows

LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK = 30, 9, 3, 64, 16


def admitted_together(batch: int, per_seq: int, prompt_blocks: int) -> torch.Tensor:
    """Block tables [batch, per_seq] of sequences admitted at once: prompts first, then decode
    blocks handed out round-robin (every sequence crosses a block boundary on the same step)."""
    prompt_blocks = min(prompt_blocks, per_seq)
    prompts = torch.arange(batch * prompt_blocks).view(batch, prompt_blocks)
    decode = batch * prompt_blocks + torch.arange(batch * (per_seq - prompt_blocks))
    return torch.cat([prompts, decode.view(per_seq - prompt_blocks, batch).t()], dim=1)


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--context", type=int, default=135)
    parser.add_argument("--kv-cache-dtype", choices=["auto", "int8"], default="auto")
    args = parser.parse_args()
    kernels = load_cpu_kernels()
    if kernels is None:
        raise SystemExit("the C++ kernels did not build on this machine")
    torch.manual_seed(0)
    b, n = args.batch_size, args.context
    per_seq = -(-n // BLOCK)
    num_blocks = 4 * b * per_seq  # a cache four times what the batch needs, as in serving
    dtype = torch.bfloat16
    int8 = args.kv_cache_dtype == "int8"
    caches = []
    for _ in range(LAYERS):
        kv = torch.randn(2, num_blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=dtype)
        caches.append(quantize_rows(kv) if int8 else (kv, None))
    q = torch.randn(b, HEADS, HEAD_DIM, dtype=dtype)
    k, v = (torch.randn(b, KV_HEADS, HEAD_DIM, dtype=dtype) for _ in range(2))
    full = torch.full((b,), n, dtype=torch.long)
    mixed = torch.tensor([n] * (b // 2) + [max(1, n // 8)] * (b - b // 2))
    layouts = {
        "scattered": torch.randperm(num_blocks)[: b * per_seq].view(b, per_seq),
        "contiguous": torch.arange(b * per_seq).view(b, per_seq),
        "admitted together": admitted_together(b, per_seq, prompt_blocks=-(-70 // BLOCK)),
    }
    row_bytes = HEAD_DIM + 4 if int8 else HEAD_DIM * dtype.itemsize  # int8: values and a scale
    kv_bytes = LAYERS * b * n * KV_HEADS * 2 * row_bytes

    def step(tables: torch.Tensor, layers: range, lens: torch.Tensor) -> None:
        last = lens - 1
        slots = tables[torch.arange(b), last // BLOCK] * BLOCK + last % BLOCK
        for layer in layers:
            (kc, vc), scales = caches[layer]
            ks, vs = (None, None) if scales is None else scales
            kernels.paged_decode_attention(
                q, k, v, kc, vc, slots, tables, lens, HEAD_DIM**-0.5, k_scale=ks, v_scale=vs
            )

    runs = [(name, tables, range(LAYERS), full) for name, tables in layouts.items()]
    runs.append(("warm", layouts["contiguous"], [0] * LAYERS, full))
    runs.append(("mixed lengths", layouts["contiguous"], range(LAYERS), mixed))
    results: dict[str, list[float]] = {name: [] for name, *_ in runs}
    for _ in range(5):
        for name, tables, layers, lens in runs:
            times = []
            for _ in range(10):
                start = time.perf_counter()
                step(tables, layers, lens)
                times.append(time.perf_counter() - start)
            results[name].append(statistics.median(times))
    print(
        f"batch {b}, context {n}, {'int8' if int8 else 'bf16'} cache: "
        f"{kv_bytes / 1e6:.1f} MB of K/V per step ({LAYERS} layers)"
    )
    for name, times in results.items():
        best = min(times)
        nbytes = kv_bytes * (int(mixed.sum()) / (b * n) if name == "mixed lengths" else 1)
        print(f"  {name:<17} {best * 1000:6.2f} ms/step  {nbytes / best / 1e9:5.1f} GB/s")


if __name__ == "__main__":
    main()
