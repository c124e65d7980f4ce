"""The grammar bitmask applied to [32, 49152] fp32 logits: the torch version
(`structured.grammar.apply_bitmask`) against the CPU kernel (`apply_token_bitmask`), checked equal
first over several vocabularies and dtypes; then timed with most tokens forbidden (a JSON schema)
and most allowed (free text), 50 calls each.

    .venv/bin/python docs/bench/session11/bitmask_apply.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.structured.grammar import apply_bitmask

k = load_cpu_kernels()
torch.manual_seed(0)
for V in (49152, 49155, 384, 1000):
    W = (V + 31) // 32
    for dtype in (torch.float32, torch.bfloat16):
        logits = torch.randn(40, V).to(dtype)
        bm = torch.randint(-(2**31), 2**31 - 1, (32, W), dtype=torch.int32)
        bm[5] = -1
        bm[6] = 0
        bm[7, ::2] = 0
        rows = torch.randperm(40)[:32]
        a = logits.clone()
        apply_bitmask(a, bm, rows)
        b = logits.clone()
        k.apply_token_bitmask(b, bm, rows)
        assert torch.equal(a, b), (V, dtype)
V = 49152
W = (V + 31) // 32
logits = torch.randn(32, V)
# JSON-like: few allowed
bm = torch.zeros(32, W, dtype=torch.int32)
bm[:, :40] = -1
rows = torch.arange(32)
for name, f in [
    ("torch", lambda: apply_bitmask(logits, bm, rows)),
    ("kernel", lambda: k.apply_token_bitmask(logits, bm, rows)),
]:
    f()
    t = time.perf_counter()
    for _ in range(50):
        f()
    print(name, "mostly forbidden", (time.perf_counter() - t) / 50 * 1e3, "ms")
bm = torch.full((32, W), -1, dtype=torch.int32)
bm[:, 3] = 0x7FFFFFFF
for name, f in [
    ("torch", lambda: apply_bitmask(logits, bm, rows)),
    ("kernel", lambda: k.apply_token_bitmask(logits, bm, rows)),
]:
    f()
    t = time.perf_counter()
    for _ in range(50):
        f()
    print(name, "mostly allowed", (time.perf_counter() - t) / 50 * 1e3, "ms")
