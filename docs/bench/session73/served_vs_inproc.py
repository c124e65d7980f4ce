"""A ~2,000-token prompt as token ids: served (streamed /v1/completions, max_tokens 1, TTFT at the
client) and in-process (an engine core in this process), in turns.

    python served_vs_inproc.py PORT ROUNDS [int8]
"""

import json
import random
import statistics
import sys
import time
import urllib.request

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

port, rounds = int(sys.argv[1]), int(sys.argv[2])
int8 = len(sys.argv) > 3
engine = InferenceEngine(
    model="smollm2", dtype="bfloat16", **({"quantization": "int8"} if int8 else {})
)
core = engine.new_core(**({"kv_cache_dtype": "int8"} if int8 else {}))
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(3)
res = {"served": [], "in-process": []}
for r in range(rounds + 1):
    ids = [rng.randrange(100, 40000) for _ in range(2000)]
    body = json.dumps({"prompt": ids, "max_tokens": 1, "temperature": 0, "stream": True}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req) as resp:
        for line in resp:
            if line.startswith(b"data: {"):
                t1 = time.perf_counter()
                break
        resp.read()
    time.sleep(0.2)
    ids = [rng.randrange(100, 40000) for _ in range(2000)]
    s = time.perf_counter()
    core.add_request(f"{r}", ids, params)
    while not any(o.finish_reason for o in core.step()):
        pass
    t2 = time.perf_counter()
    time.sleep(0.2)
    if r:
        res["served"].append(t1 - t0)
        res["in-process"].append(t2 - s)
for k, v in res.items():
    v = sorted(v)
    print(
        f"{k}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * v[len(v) // 4]:.0f}-{1e3 * v[3 * len(v) // 4]:.0f}) all {[round(1e3 * x) for x in v]}"
    )
