import sys, time, os
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]; bs = int(sys.argv[2]); n = int(sys.argv[3])
o = {"auto": {}, "bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **o), bs, context=int(os.environ.get("CTX", 70)))
open("/tmp/ready","w").write(str(os.getpid()))
t = time.perf_counter()
for _ in range(n): core.step()
print(f"{mode} b{bs}: {(time.perf_counter()-t)/n*1e3:.2f} ms/step", flush=True)
