import time, statistics, torch
from roseinfer.engine import InferenceEngine
layers = {}
for quant in ("bf16", "int8"):
    kw = dict(quantization="int8") if quant == "int8" else {}
    engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
    mods = [m for n, m in engine.model.named_modules() if n.endswith("gate_up_proj")]
    layers[quant] = mods
    print(quant, len(mods), type(mods[0]).__name__)
torch.manual_seed(0)
x = (torch.randn(2000, 576) * 0.5).bfloat16()
t = {q: [] for q in layers}
for r in range(12):
    for q, mods in layers.items():
        s = time.perf_counter()
        for m in mods: m.silu_mul(x)
        t[q].append(time.perf_counter() - s)
for q, v in t.items():
    v = sorted(v[2:]); print(f"{q}: {1e3*statistics.median(v):.1f} ms (q {1e3*v[len(v)//4]:.1f}-{1e3*v[3*len(v)//4]:.1f})")
