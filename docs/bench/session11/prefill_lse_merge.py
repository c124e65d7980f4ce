"""One layer of a later prefill chunk (512 queries after 1,536 cached keys, SmolLM2 heads):
masked SDPA over all the keys against two unmasked/causal SDPAs (prefix and own keys) merged by
their log-sum-exp. Session 11: is the gather + mask what makes later chunks cost?

    .venv/bin/python docs/bench/session11/prefill_lse_merge.py
"""

import statistics
import time

import torch
import torch.nn.functional as F

torch.manual_seed(0)
H, KVH, D = 9, 3, 64
n, prefix = 512, 1536
q = torch.randn(1, H, n, D)
kp = torch.randn(1, KVH, prefix, D)
vp = torch.randn(1, KVH, prefix, D)
ks = torch.randn(1, KVH, n, D)
vs = torch.randn(1, KVH, n, D)
K = torch.cat([kp, ks], 2)
V = torch.cat([vp, vs], 2)
pos = torch.arange(prefix + n)
qpos = prefix + torch.arange(n)
mask = (pos[None, :] <= qpos[:, None])[None, None]


def masked():
    return F.scaled_dot_product_attention(q, K, V, attn_mask=mask, enable_gqa=True)


def merged():
    g = H // KVH
    kp2, vp2 = kp.repeat_interleave(g, 1), vp.repeat_interleave(g, 1)
    ks2, vs2 = ks.repeat_interleave(g, 1), vs.repeat_interleave(g, 1)
    o1, l1 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, kp2, vp2, 0.0, False)[:2]
    o2, l2 = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, ks2, vs2, 0.0, True)[:2]
    m = torch.maximum(l1, l2)
    w1, w2 = (l1 - m).exp(), (l2 - m).exp()
    return (o1 * w1[..., None] + o2 * w2[..., None]) / (w1 + w2)[..., None]


a, b = masked(), merged()
print("maxdiff", (a - b).abs().max().item())
for name, f in [("masked", masked), ("merged", merged)] * 2:
    f()
    ts = []
    for _ in range(10):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    print(name, f"{1e3 * statistics.median(ts):.2f} ms per layer")
