# A/B in one process: runner.sample as is vs a minimal all-greedy path (upper bound of a fast path)
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.engine.model_runner import SampledToken
mode = sys.argv[1]; rounds = int(sys.argv[2])
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
eng = InferenceEngine(**opts)
A = decoding_core(eng, 1, max_new_tokens=rounds*4+60)
B = decoding_core(eng, 1, max_new_tokens=rounds*4+60)
r = B.runner
argmax = r.backend.kernels.argmax_rows
def fast_sample(seqs, logits, fresh=None):
    ids, maxima = argmax(logits)
    return [SampledToken(t) for t in ids.tolist()]
r.sample = fast_sample
a = torch.ones(128*1024*1024)
T = {"A": ([], []), "B": ([], [])}; bws = []
for i in range(rounds):
    s=time.perf_counter(); a.sum(); bws.append(a.numel()*4/(time.perf_counter()-s)/1e9)
    for name, core in (("A", A), ("B", B)) if i % 2 == 0 else (("B", B), ("A", A)):
        ts = []
        for _ in range(4):
            s=time.perf_counter(); core.step(); ts.append(time.perf_counter()-s)
        T[name][0].append(ts[0]); T[name][1].append(statistics.median(ts[1:]))
print("bw", round(statistics.median(bws),1))
for k in (0, 1):
    a_, b_ = T["A"][k], T["B"][k]
    d = statistics.median([y/x-1 for x, y in zip(a_, b_)])
    print(["first", "in a row"][k], f"A {statistics.median(a_)*1e3:.3f} B {statistics.median(b_)*1e3:.3f} ms, B/A-1 {d*100:+.1f} %")
