# The step at several contexts in one process (one engine per context), in turns.  ctx.py int8 16,70,300,1000
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
eng = InferenceEngine(**opts)
ctxs = [int(c) for c in sys.argv[2].split(",")]
cores = {c: decoding_core(eng, 1, context=c, max_new_tokens=300) for c in ctxs}
a = torch.ones(128*1024*1024)
T = {c: [] for c in ctxs}; bws = []
for r in range(40):
    s=time.perf_counter(); a.sum(); bws.append(a.numel()*4/(time.perf_counter()-s)/1e9)
    for c, core in cores.items():
        core.step()
        for i in range(3):
            s=time.perf_counter(); core.step(); T[c].append(time.perf_counter()-s)
print("bw", round(statistics.median(bws),1))
for c in ctxs: print(c, f"{statistics.median(T[c])*1e3:.3f} ms")
