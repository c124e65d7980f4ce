"""The decode kernel over 30 layers' caches for one 2,000-key sequence beside short ones (lengths
from argv), bf16, median ms of 50 steps."""
import statistics, sys, time, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
lens = [int(x) for x in sys.argv[1].split(",")]
bs, hd, H, KVH, L = 16, 64, 9, 3, 30
torch.manual_seed(0)
nb = sum(-(-n // bs) for n in lens) + 2
perm = torch.randperm(nb).tolist()
tables, slots = [], []
for n in lens:
    blocks = [perm.pop() for _ in range(-(-n // bs))]
    tables.append(blocks)
    slots.append(blocks[(n - 1) // bs] * bs + (n - 1) % bs)
w = max(len(t) for t in tables)
table = torch.tensor([t + [0] * (w - len(t)) for t in tables])
caches = [[torch.randn(nb, KVH, bs, hd).bfloat16() for _ in range(2)] for _ in range(L)]
B = len(lens)
q = torch.randn(B, H, hd).bfloat16()
kk, v = (torch.randn(B, KVH, hd).bfloat16() for _ in range(2))
args = (torch.tensor(slots), table, torch.tensor(lens), hd ** -0.5)
times = []
for i in range(60):
    t = time.perf_counter()
    for c in caches:
        k.paged_decode_attention(q, kk, v, c[0], c[1], *args)
    if i >= 10:
        times.append(time.perf_counter() - t)
print(f"lens {sys.argv[1]}: {1e3 * statistics.median(times):.2f} ms")
