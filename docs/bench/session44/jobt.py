import sys, os, time
sys.path.insert(0, "benchmarks")
os.environ["ROSE_JOBT"] = "1"
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=int(sys.argv[2]), max_new_tokens=1000)
for _ in range(600): core.step()
a = torch.ones(128*1024*1024); t=time.perf_counter(); a.sum(); print("sum GB/s", a.numel()*4/(time.perf_counter()-t)/1e9, file=sys.stderr)
