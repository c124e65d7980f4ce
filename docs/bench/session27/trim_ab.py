"""A/B: `8869982`'s KernelInt8Linear/KernelDpbf16Linear.forward and RotaryEmbedding.forward
(read with `git show`) against the working tree's, swapped in step by step on one engine core.

    PYTHONPATH=. .venv/bin/python docs/bench/session27/trim_ab.py int8|bf16 BATCH STEPS
"""
import sys, time, statistics, collections, subprocess, tempfile, os, importlib.util
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.backends.cpu_linear as L
import roseinfer.layers.rotary as RO
def module_at(path, name):
    text = subprocess.run(["git", "show", f"8869982:{path}"], capture_output=True, text=True, check=True).stdout
    f = os.path.join(tempfile.mkdtemp(), name + ".py"); open(f, "w").write(text)
    spec = importlib.util.spec_from_file_location(name, f); m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m); return m
oL = module_at("roseinfer/backends/cpu_linear.py", "old_lin"); oR = module_at("roseinfer/layers/rotary.py", "old_rot")
forms = {"before": {(L.KernelInt8Linear, "forward"): oL.KernelInt8Linear.__dict__["forward"], (L.KernelDpbf16Linear, "forward"): oL.KernelDpbf16Linear.__dict__["forward"], (RO.RotaryEmbedding, "forward"): oR.RotaryEmbedding.__dict__["forward"]},
         "after": {(L.KernelInt8Linear, "forward"): L.KernelInt8Linear.__dict__["forward"], (L.KernelDpbf16Linear, "forward"): L.KernelDpbf16Linear.__dict__["forward"], (RO.RotaryEmbedding, "forward"): RO.RotaryEmbedding.__dict__["forward"]}}
mode, B, N = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=70, max_new_tokens=2 * N + 40)
for _ in range(10): core.step()
times = collections.defaultdict(list)
for i in range(N):
    for f in (("before", "after") if i % 2 else ("after", "before")):
        for (c, a), fn in forms[f].items(): setattr(c, a, fn)
        s = time.perf_counter(); core.step(); times[f].append(time.perf_counter() - s)
a, b = (statistics.median(times[f]) * 1e3 for f in ("before", "after"))
print(f"{mode} batch {B}: before {a:.3f} ms, after {b:.3f} ms ({b - a:+.3f} ms, {(b / a - 1) * 100:+.1f} %)")
