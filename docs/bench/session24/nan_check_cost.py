"""What a per-row check for NaN/inf logits would cost as its own pass over the vocabulary
(session 24 chose instead to read the values the argmax and the draw already compute: the
chosen greedy logit and each sampled row's maximum, [B] each).

    .venv/bin/python docs/bench/session24/nan_check_cost.py
"""

import time

import torch

torch.set_num_threads(2)
for rows in (1, 32):
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(rows, 49152).to(dtype)
        checks = {
            "isfinite(sum in fp32)": lambda: torch.isfinite(x.sum(dim=-1, dtype=torch.float32)),
            "isnan().any()": lambda: x.isnan().any(dim=-1),
            "isfinite(amax)": lambda: x.amax(dim=-1).isfinite(),
            "chosen logit (gather [B])": lambda: x.gather(1, torch.zeros(rows, 1, dtype=torch.long)).isfinite(),
        }
        for name, check in checks.items():
            for _ in range(20):
                check()
            t = time.perf_counter()
            for _ in range(200):
                check()
            print(f"{rows:2d} x 49152 {str(dtype):15s} {name:26s} {(time.perf_counter() - t) / 200 * 1e6:8.1f} us")
