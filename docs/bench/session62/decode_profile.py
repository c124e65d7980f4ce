import os, statistics, sys, time, subprocess
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
q = sys.argv[3] if len(sys.argv) > 3 else "none"
engine = InferenceEngine(model="smollm2", quantization=q) if q != "none" else InferenceEngine(model="smollm2")
batch = int(sys.argv[1]); n = int(sys.argv[2])
dcore = decoding_core(engine, batch)
for _ in range(3): dcore.step()
perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4000", "-o", f"/tmp/s62/perf_b{batch}_{q}.data", "-p", str(os.getpid())], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
time.sleep(1)
steps = []
for _ in range(n):
    t = time.perf_counter(); dcore.step(); steps.append(time.perf_counter() - t)
perf.send_signal(2); perf.wait()
print(f"batch {batch}: step {1000 * statistics.median(steps):.2f} ms")
