"""Ways of making a step's int64 index tensors, each timed right after a 128 MB `sum`.

    .venv/bin/python docs/bench/session28/cold_index_tensors.py
"""
import torch, time, statistics, array
import numpy as np
big = torch.ones(32 * 1024 * 1024)
L = [1, 2, 3, 4, 5, 6]
ops = {
    "nothing": lambda: None,
    "torch.tensor x1": lambda: torch.tensor(L, dtype=torch.long),
    "torch.tensor x6": lambda: [torch.tensor(L, dtype=torch.long) for _ in range(6)],
    "frombuffer(array) x1": lambda: torch.frombuffer(array.array("q", L), dtype=torch.long),
    "frombuffer(array) x6": lambda: [torch.frombuffer(array.array("q", L), dtype=torch.long) for _ in range(6)],
    "from_numpy x1": lambda: torch.from_numpy(np.array(L, dtype=np.int64)),
    "as_tensor x1": lambda: torch.as_tensor(L, dtype=torch.long),
}
res = {n: [] for n in ops}
for i in range(60):
    for n, f in ops.items():
        big.sum()
        t = time.perf_counter(); f(); res[n].append(time.perf_counter() - t)
for n, v in res.items(): print(f"{n:22s} cold {statistics.median(v)*1e6:7.1f} us")
