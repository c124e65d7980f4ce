# Where a one-stream step's time goes, by Python method (wrapped timers), first step after a 512 MB sum and steps in a row.  parts.py int8|bf16 ROUNDS
import sys, time, statistics, collections
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.engine.model_runner as mr
import roseinfer.engine.llm_engine as le

quant = sys.argv[1] if len(sys.argv) > 1 else "int8"
opts = {"quantization": "int8"} if quant == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(**opts), 1, max_new_tokens=2000)
T = collections.defaultdict(list)
def wrap(obj, name, label):
    f = getattr(obj, name)
    def g(*a, **k):
        s = time.perf_counter(); r = f(*a, **k); T[label].append(time.perf_counter() - s); return r
    setattr(obj, name, g)
runner = core.runner
wrap(core.scheduler, "schedule", "schedule")
wrap(core.scheduler, "on_computed", "on_computed")
wrap(core, "_process", "process")
wrap(core, "stats", "stats")
wrap(runner, "prepare", "prepare")
wrap(runner.backend.attention, "prepare", "attn.prepare")
if False:
    wrap(runner.decoder_stack, "for_step", "stack.for_step")
wrap(runner, "_logits", "logits")
wrap(runner.model, "forward", "model.forward")
wrap(runner.model, "compute_logits", "lm_head")
wrap(runner, "sample", "sample")
wrap(runner.sampler, "__call__", "sampler") if False else None
wrap(runner, "_sample", "_sample")
wrap(runner, "run", "run")
wrap(runner.sampler, "argmax", "argmax")
wrap(runner.sampler, "_mask", "_mask")
wrap(runner.sampler, "_sample", "sampler._sample")
import roseinfer.engine.model_runner as MR
wrap(MR, "to_records", "to_records")
wrap(runner, "_forward", "_forward")
steps = []
a = torch.ones(128 * 1024 * 1024)
bws = []
for _ in range(20): core.step()
T.clear()
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 100
for r in range(rounds):
    s = time.perf_counter(); a.sum(); bws.append(a.numel()*4/(time.perf_counter()-s)/1e9)
    for i in range(4):
        s = time.perf_counter(); core.step(); steps.append(time.perf_counter() - s)
print("bw median", f"{statistics.median(bws):.1f}")
def inrow(v): return [x for i, x in enumerate(v) if i % 4 != 0]
def first(v): return [x for i, x in enumerate(v) if i % 4 == 0]
print("step in a row", f"{statistics.median(inrow(steps))*1e6:.0f}", "first", f"{statistics.median(first(steps))*1e6:.0f}")
for k, v in T.items():
    if len(v) != len(steps): continue
    print(f"{k:16s} {statistics.median(inrow(v))*1e6:8.1f} us  first {statistics.median(first(v))*1e6:8.1f}")
