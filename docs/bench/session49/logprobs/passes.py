"""The two passes alone over 800 rows of 49,152 bf16 logits (an 800-token prompt's
prompt_logprobs in SmolLM2's vocabulary): torch's (`layers.logprobs`) against the kernels.

    .venv/bin/python docs/bench/session49/logprobs/passes.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.logprobs import count_greater_rows, logsumexp_rows

k = load_cpu_kernels()
x = (torch.randn(800, 49152, generator=torch.Generator().manual_seed(0)) * 3).bfloat16()
v = x[:, 7].float()
cases = {
    "logsumexp torch": lambda: logsumexp_rows(x),
    "logsumexp kernel": lambda: k.logsumexp_rows(x),
    "count torch": lambda: count_greater_rows(x, v),
    "count kernel": lambda: k.count_greater_rows(x, v),
}
for name, f in cases.items():
    f()
    times = []
    for _ in range(7):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    print(f"{name}: {sorted(times)[3] * 1e3:.1f} ms (median of 7)")
