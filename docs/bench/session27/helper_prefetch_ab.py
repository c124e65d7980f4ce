"""A helper thread reads the first X MB of the next step's weights (`touch_bytes`, from
`touch_bytes.patch`, without the GIL) while the step's Python (sampling, output, scheduling)
runs; the next forward waits for it. X = 0 / 4 / 8 / 16 MB in turns.

    PYTHONPATH=. .venv/bin/python docs/bench/session27/helper_prefetch_ab.py int8
"""
import sys, time, statistics, collections, threading
import os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
mode = sys.argv[1]; B = int(sys.argv[2]) if len(sys.argv) > 2 else 1
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
engine = InferenceEngine(model="smollm2", **opts)
core = decoding_core(engine, B, context=70, max_new_tokens=1000)
m = core.runner.model
weights = []
for layer in m.model.layers:
    for lin in (layer.self_attn.qkv_proj, layer.self_attn.o_proj, layer.mlp.gate_up_proj, layer.mlp.down_proj):
        w = getattr(lin, "vnni_qweight", None)
        if w is None: w = getattr(lin, "packed", None)
        if w is None: w = [v for v in vars(lin).values() if isinstance(v, torch.Tensor)]
        weights.append(w)
print("weight kinds", type(weights[0]), getattr(weights[0], "shape", None))
budget = {"mb": 0}
chunk = torch.empty(0, dtype=torch.uint8).set_(weights[0].untyped_storage())
off = weights[0].data_ptr() - chunk.data_ptr()
print("ordered", all(a.data_ptr() < b.data_ptr() for a, b in zip(weights, weights[1:])), "offset", off, "chunk", chunk.numel())
span = chunk[off:]
go, done = threading.Event(), threading.Event()
done.set()
def worker():
    while True:
        go.wait(); go.clear()
        k.touch_bytes(span, budget["mb"] << 20)
        done.set()
threading.Thread(target=worker, daemon=True).start()
real_f, real_l = m.forward, m.compute_logits
waits = []
def f(*a, **kw):
    s = time.perf_counter(); done.wait(); waits.append(time.perf_counter() - s)
    return real_f(*a, **kw)
def l(*a, **kw):
    r = real_l(*a, **kw)
    if budget["mb"]:
        done.clear(); go.set()
    return r
m.forward, m.compute_logits = f, l
MODES = [0, 4, 8, 16]
times = collections.defaultdict(list); wt = collections.defaultdict(list)
for i in range(10): core.step()
for i in range(120):
    for mb in (MODES if i % 2 else MODES[::-1]):
        budget["mb"] = mb
        core.step()  # primes this mode's prefetch for the next step
        n0 = len(waits); s = time.perf_counter(); core.step(); times[mb].append(time.perf_counter() - s); wt[mb].append(waits[n0])
base = statistics.median(times[0])
for mb in MODES:
    t = statistics.median(times[mb])
    print(f"{mode} batch {B}: prefetch {mb:2d} MB: step {t*1e3:.3f} ms ({(t/base-1)*100:+.1f} %), forward waited {statistics.median(wt[mb])*1e3:.3f} ms")
