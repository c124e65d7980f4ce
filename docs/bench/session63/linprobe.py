"""Run from the repository root: .venv/bin/python docs/bench/session63/linprobe.py int8 (session 63). int8 one row: the engine's 120 linears + LM head called alone, cold (after a 512 MB sum), vs a full step cold."""
import statistics, time, sys
import torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine

mode = sys.argv[1] if len(sys.argv) > 1 else "int8"
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
eng = InferenceEngine(model="smollm2", **opts)
core = decoding_core(eng, 1, context=70, max_new_tokens=2000)
model = core.runner.model
lins = [m for m in model.modules() if hasattr(m, "decode_linear")]
print(len(lins), "linears", type(lins[0]).__name__)
nbytes = 0
xs = []
for m in lins:
    w = getattr(m, "vnni_qweight", None)
    if w is None:
        w = next(t for t in m.buffers()) if list(m.buffers()) else next(m.parameters())
    nbytes += w.numel() * w.element_size()
    inf = w.shape[1] * w.shape[3] if w.dim() == 4 else w.shape[-1]
    xs.append(inf)
print("weight bytes", nbytes / 1e6, "MB; in_features", sorted(set(xs)))
xin = {k: torch.randn(1, k).to(torch.bfloat16) for k in set(xs)}
a = torch.ones(128 * 1024 * 1024)
def lin_only():
    for m, k in zip(lins, xs):
        m(xin[k])
def lin_warm_overhead():
    pass
res = {"step": [], "linears": [], "bw": []}
for r in range(40):
    for name in ("step", "linears"):
        t = time.perf_counter(); a.sum(); bw = a.numel() * 4 / (time.perf_counter() - t)
        t = time.perf_counter()
        if name == "step":
            core.step()
        else:
            lin_only()
        dt = time.perf_counter() - t
        res[name].append((dt, dt * bw / nbytes))
        res["bw"].append(bw / 1e9)
for name in ("step", "linears"):
    print(name, "median %.2f ms, ratio to floor %.2f" % (statistics.median(d for d, _ in res[name][2:]) * 1e3,
          statistics.median(q for _, q in res[name][2:])))
print("bw median %.1f GB/s" % statistics.median(res["bw"]))
# warm linears (in L3 / repeated)
ts = []
for _ in range(20):
    t = time.perf_counter(); lin_only(); ts.append(time.perf_counter() - t)
print("linears repeated (warm, L3) median %.2f ms" % (statistics.median(ts) * 1e3))
