"""The candidates' selection alone: `top_candidates_rows` against `torch.topk` at m 256 for 1 to
256 rows of 49,152 (one and two threads), then the kernel at m 1,025 / 2,049 / 4,097 (the
tiers, and one past each for the next logit) and `torch.sort` of whole rows; median ms of a
call over distinct random rows (a row repeated lets the branch predictor learn it):
    .venv/bin/python docs/bench/session57/candidates_kernel.py"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
assert kernels is not None, "the C++ kernels do not build here"
torch.manual_seed(0)
x = torch.randn(256, 49152) * 3


def ms(call: Callable[[], object], n: int = 20) -> float:
    call()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


for threads in (1, 2):
    torch.set_num_threads(threads)
    for rows in (1, 8, 32, 256):
        rows_x = x[:rows]
        kernel = ms(lambda: kernels.top_candidates_rows(rows_x, 257))
        topk = ms(lambda: rows_x.topk(257))
        print(f"{threads} thread(s), {rows} rows, m 257: kernel {kernel:.3f} ms, "
              f"torch.topk {topk:.3f} ms", flush=True)  # fmt: skip
torch.set_num_threads(2)
for m in (1025, 2049, 4097):
    print(f"2 threads, 32 rows, m {m}: kernel {ms(lambda: kernels.top_candidates_rows(x[:32], m)):.3f} ms",
          flush=True)  # fmt: skip
print(f"2 threads, 8 rows: torch.sort of the vocabulary {ms(lambda: x[:8].sort(-1)):.3f} ms")
