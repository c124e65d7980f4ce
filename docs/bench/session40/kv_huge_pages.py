"""The decode kernel over 30 layers' bf16 caches in 4 KB pages (torch.zeros) or in 2 MB pages
(huge_page_zeros, written at allocation), in turns: BATCH x CONTEXT, a sequence's blocks adjacent
(as a long prompt's) or scattered."""
import statistics, sys, time
import torch
sys.path.insert(0, "benchmarks")
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.huge_pages import huge_page_zeros
LAYERS, HEADS, KVH, D, BS = 30, 9, 3, 64, 16
kern = load_cpu_kernels()
b, n = int(sys.argv[1]), int(sys.argv[2])
per_seq = -(-n // BS)
num_blocks = 4 * b * per_seq
torch.manual_seed(0)
def caches(huge):
    out = []
    for _ in range(LAYERS):
        shape = (2, num_blocks, KVH, BS, D)
        t = huge_page_zeros(shape, torch.bfloat16) if huge else torch.zeros(shape, dtype=torch.bfloat16)
        t.normal_()
        out.append(t)
    return out
sets = {"4k": caches(False), "2m": caches(True)}
q = torch.randn(b, HEADS, D, dtype=torch.bfloat16)
k, v = (torch.randn(b, KVH, D, dtype=torch.bfloat16) for _ in range(2))
lens = torch.full((b,), n, dtype=torch.long)
tables = {"adjacent": torch.arange(b * per_seq).view(b, per_seq),
          "scattered": torch.randperm(num_blocks)[: b * per_seq].view(b, per_seq)}
res = {}
for _ in range(5):
    for tname, t in tables.items():
        last = lens - 1
        slots = t[torch.arange(b), last // BS] * BS + last % BS
        for name, cs in sets.items():
            times = []
            for _ in range(6):
                s = time.perf_counter()
                for kv in cs:
                    kern.paged_decode_attention(q, k, v, kv[0], kv[1], slots, t, lens, D ** -0.5)
                times.append(time.perf_counter() - s)
            res.setdefault((tname, name), []).append(statistics.median(times))
for key, ts in res.items():
    print(f"{b}x{n} {key[0]:9s} {key[1]} pages: best {min(ts)*1e3:.2f} ms, median {statistics.median(ts)*1e3:.2f} ms")
