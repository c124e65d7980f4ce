"""Outputs of the plain kernels (vnni_int8_linear, dpbf16_linear, silu_and_mul) on fixed inputs,
saved to compare two builds: python plain_outputs.py OUT.pt"""
import sys, torch
from torch import nn
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.linear import Int8Linear
k = load_cpu_kernels(); torch.manual_seed(0); res = {}
for dtype in (torch.float32, torch.bfloat16, torch.float16):
    for rows, K, N in ((1, 576, 3072), (7, 576, 960), (33, 192, 160), (70, 64, 96)):
        lin = nn.Linear(K, N, bias=True).to(dtype); q = Int8Linear(lin); x = torch.randn(rows, K).to(dtype)
        p = k.vnni_pack_weight(q.qweight)
        res[f"vnni {dtype} {rows} {K} {N}"] = k.vnni_int8_linear(x, p, q.scale, lin.bias.detach())
        res[f"vnni nobias {dtype} {rows} {K} {N}"] = k.vnni_int8_linear(x, p, q.scale)
        res[f"silu {dtype} {rows} {N}"] = k.silu_and_mul(torch.randn(rows, N).to(dtype))
        if dtype == torch.bfloat16:
            res[f"dpbf16 {rows} {K} {N}"] = k.dpbf16_linear(x, k.dpbf16_pack_weight(lin.weight.detach()), lin.bias.detach())
torch.save(res, sys.argv[1]); print(len(res), "outputs")
