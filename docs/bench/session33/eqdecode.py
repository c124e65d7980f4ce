# The decode kernel's outputs over fp32/bf16/fp16 q, model-dtype and int8 caches, four head shapes and
# six batches of lengths on 1-3 threads, hashed: only the cases that take whole tasks (BASE has
# no split). The same hash from BASE (a worktree of 8d37292) and from the split's tree:
#   (cd BASE && PYTHONPATH=. /work/main/.venv/bin/python /work/main/docs/bench/session33/eqdecode.py)
#   PYTHONPATH=. .venv/bin/python docs/bench/session33/eqdecode.py   # 213c2e0610b5a4c9d7b84a8140f960a9
import hashlib, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
h = hashlib.md5()
torch.manual_seed(0)
for threads in [1, 2, 3]:
    torch.set_num_threads(threads)
    for dtype in [torch.float32, torch.bfloat16, torch.float16]:
        for cache in ["model", "int8"]:
            for bs, hd, H, KVH in [(16, 64, 9, 3), (16, 128, 4, 4), (5, 64, 8, 2), (16, 16, 4, 2)]:
                for lens in [[1, 16, 17, 70, 200], [900, 3, 40, 12], [100], [70], [2000, 300],
                             [300] * 4]:
                    # Only steps that keep whole tasks (the only path BASE has): one thread,
                    # no sequence of 256 keys, or equal sequences enough to balance the threads.
                    if not (threads == 1 or max(lens) < 256 or lens == [300] * 4):
                        continue
                    nb = sum(-(-n // bs) for n in lens) + 2
                    perm = torch.randperm(nb).tolist()
                    tables, slots = [], []
                    for n in lens:
                        blocks = [perm.pop() for _ in range(-(-n // bs))]
                        tables.append(blocks)
                        slots.append(blocks[(n - 1) // bs] * bs + (n - 1) % bs)
                    w = max(len(t) for t in tables)
                    table = torch.tensor([t + [0] * (w - len(t)) for t in tables])
                    B = len(lens)
                    q = torch.randn(B, H, hd, dtype=dtype)
                    kk, v = (torch.randn(B, KVH, hd, dtype=dtype) for _ in range(2))
                    shape = (nb, KVH, bs, hd)
                    if cache == "int8":
                        caches = [torch.randint(-127, 128, shape, dtype=torch.int8) for _ in range(2)] + [torch.rand(shape[:3]) / 64 for _ in range(2)]
                    else:
                        caches = [torch.randn(shape, dtype=dtype) for _ in range(2)]
                    o = k.paged_decode_attention(q, kk, v, caches[0], caches[1], torch.tensor(slots), table, torch.tensor(lens), hd ** -0.5, *caches[2:])
                    h.update(o.float().numpy().tobytes())
print(h.hexdigest())
