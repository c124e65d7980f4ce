"""Each PyTorch op a step runs once, timed alone right after a 128 MB `sum` has evicted the caches
(as a decode step's weights do): the median of 60 tries each.

    .venv/bin/python docs/bench/session28/cold_ops.py
"""
import torch, time, statistics
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
big = torch.ones(32 * 1024 * 1024)  # 128 MB: evicts L3 like a step's weights
logits = torch.randn(1, 49152).bfloat16()
ids = torch.tensor([5])
w = torch.randn(49152, 576).bfloat16()
cos = torch.randn(8192, 32).bfloat16()
pos = torch.tensor([77])
ops = {
    "nothing": lambda: None,
    "argmax_rows": lambda: k.argmax_rows(logits),
    "gather+tolist": lambda: logits.gather(1, ids.view(-1, 1)).view(-1).tolist(),
    "tolist": lambda: ids.tolist(),
    "torch.tensor(list)": lambda: torch.tensor([1, 2, 3]),
    "embedding": lambda: torch.nn.functional.embedding(ids, w),
    "index_select": lambda: cos.index_select(0, pos),
    "inference_mode": lambda: torch.inference_mode().__enter__(),
    "empty": lambda: torch.empty(1, 576, dtype=torch.bfloat16),
    "float()": lambda: logits.float(),
}
res = {n: [] for n in ops}
for i in range(60):
    for n, f in ops.items():
        big.sum()
        t = time.perf_counter(); f(); res[n].append(time.perf_counter() - t)
for n, v in res.items(): print(f"{n:20s} cold {statistics.median(v)*1e6:7.1f} us")
