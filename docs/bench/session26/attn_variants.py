"""Decode attention, kernel variants built with different -D flags, in turns (decode_attention.py's setup)."""
import dataclasses, statistics, sys, time
import torch
from roseinfer.kernels.build import KERNELS, load_kernels
from roseinfer.layers.kv_cache import quantize_rows

LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK = 30, 9, 3, 64, 16
b, n = int(sys.argv[1]), int(sys.argv[2])
int8 = sys.argv[4] == "int8" if len(sys.argv) > 4 else False
variants = {}
for v in sys.argv[3].split(","):
    flags = tuple(f for f in v.split("+") if f)
    spec = dataclasses.replace(KERNELS, cflags=KERNELS.cflags + flags)
    variants[v or "default"] = load_kernels(spec)
torch.manual_seed(0)
per_seq = -(-n // BLOCK)
num_blocks = 4 * b * per_seq
caches = []
for _ in range(LAYERS):
    kv = torch.randn(2, num_blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=torch.bfloat16)
    caches.append(quantize_rows(kv) if int8 else (kv, None))
q = torch.randn(b, HEADS, HEAD_DIM, dtype=torch.bfloat16)
k, v = (torch.randn(b, KV_HEADS, HEAD_DIM, dtype=torch.bfloat16) for _ in range(2))
lens = torch.full((b,), n, dtype=torch.long)
prompt_blocks = min(-(-70 // BLOCK), per_seq)
prompts = torch.arange(b * prompt_blocks).view(b, prompt_blocks)
dec = b * prompt_blocks + torch.arange(b * (per_seq - prompt_blocks))
layouts = {"scattered": torch.randperm(num_blocks)[: b * per_seq].view(b, per_seq),
           "admitted": torch.cat([prompts, dec.view(per_seq - prompt_blocks, b).t()], dim=1)}
# a buffer to flush caches between steps, as the weights do in the engine
flush = torch.empty(64 << 20, dtype=torch.uint8)
def step(kern, tables):
    last = lens - 1
    slots = tables[torch.arange(b), last // BLOCK] * BLOCK + last % BLOCK
    for layer in range(LAYERS):
        (kc, vc), scales = caches[layer]
        ks, vs = (None, None) if scales is None else scales
        kern.paged_decode_attention(q, k, v, kc, vc, slots, tables, lens, HEAD_DIM**-0.5, k_scale=ks, v_scale=vs)
res = {(name, lay): [] for name in variants for lay in layouts}
for r in range(int(sys.argv[5]) if len(sys.argv) > 5 else 3):
    for name, kern in variants.items():
        for lay, tables in layouts.items():
            ts = []
            for _ in range(8):
                flush.add_(1)
                t = time.perf_counter(); step(kern, tables); ts.append(time.perf_counter() - t)
            res[(name, lay)].append(statistics.median(ts))
for (name, lay), ts in res.items():
    print(f"{name:40s} {lay:10s} best {min(ts)*1000:6.2f}  median {statistics.median(ts)*1000:6.2f} ms")
