"""The served 'short' workload (128 requests, 70-token random prompts, 128 out, 32 at a time) on the engine alone, with a step trace."""
import random, statistics, sys, time, collections
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine
quant = sys.argv[1] if len(sys.argv) > 1 else "none"
engine = InferenceEngine(model="smollm2", quantization=quant) if quant != "none" else InferenceEngine(model="smollm2")
core = engine.new_core()
rng = random.Random(1)
params = SamplingParams(max_new_tokens=128, temperature=0, ignore_eos=True)
total, conc = 128, 32
added = 0
def add():
    global added
    core.add_request(f"r{added}", [rng.randrange(100, 40000) for _ in range(70)], params); added += 1
for _ in range(conc): add()
steps = []  # (seconds, batched, prefill)
t0 = time.perf_counter(); out_tokens = 0
while core.has_unfinished():
    t = time.perf_counter()
    outs = core.step()
    dt = time.perf_counter() - t
    st = core.last_step
    steps.append((dt, st.num_batched_tokens, st.num_prefill_tokens))
    for o in outs:
        out_tokens += 1
        if o.finish_reason is not None and added < total: add()
wall = time.perf_counter() - t0
print(f"{quant}: {out_tokens} tokens in {wall:.2f} s: {out_tokens/wall:.1f} tok/s, {len(steps)} steps")
pure = [s[0] for s in steps if s[2] == 0]
mixed = [s for s in steps if s[2] > 0]
print(f"pure decode steps: {len(pure)}, median {1e3*statistics.median(pure):.1f} ms, sum {sum(pure):.2f} s")
print(f"steps with prefill: {len(mixed)}, prefill tokens {sum(s[2] for s in mixed)}, median batched {statistics.median(s[1] for s in mixed)}, median {1e3*statistics.median(s[0] for s in mixed):.1f} ms, sum {sum(s[0] for s in mixed):.2f} s")
hist = collections.Counter(min(s[2] // 70, 8) for s in mixed)
print("prefill prompts per mixed step:", dict(sorted(hist.items())))
