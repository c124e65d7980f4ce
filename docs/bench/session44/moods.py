"""Over a few minutes: the 512 MB sum in 4 KB pages (one_stream.py's), the same in 2 MB pages,
and an int8 one-row step in a row, every half second: which of them the host's moods move."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.layers.huge_pages import huge_page_zeros
n = int(sys.argv[1])
core = decoding_core(InferenceEngine(model="smollm2", quantization="int8"), 1, context=70, max_new_tokens=n * 4 + 40)
small = torch.ones(128 * 1024 * 1024)
huge = huge_page_zeros((128 * 1024 * 1024,), torch.float32); huge.fill_(1.0)
def bw(a):
    a.sum(); t = time.perf_counter(); a.sum(); return a.numel() * 4 / (time.perf_counter() - t) / 1e9
for _ in range(10): core.step()
rows = []
for i in range(n):
    b4, b2 = bw(small), bw(huge)
    ts = []
    for _ in range(4):
        t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
    rows.append((b4, b2, statistics.median(ts[1:]) * 1e3))
    time.sleep(0.3)
for r in rows[:: max(1, n // 40)]: print("sum 4K %.1f  sum 2M %.1f  step %.3f" % r)
import numpy as np
a = np.array(rows)
print("corr(4K, step) %.2f  corr(2M, step) %.2f  corr(4K, 2M) %.2f" % (np.corrcoef(a[:,0], a[:,2])[0,1], np.corrcoef(a[:,1], a[:,2])[0,1], np.corrcoef(a[:,0], a[:,1])[0,1]))
print("floor ratio (134.6 MB): vs 4K median %.2f (IQR %.2f-%.2f); vs 2M median %.2f (IQR %.2f-%.2f)" % (
    np.median(a[:,2] / (134.6 / a[:,0])), *np.percentile(a[:,2] / (134.6 / a[:,0]), [25, 75]),
    np.median(a[:,2] / (134.6 / a[:,1])), *np.percentile(a[:,2] / (134.6 / a[:,1]), [25, 75])))
