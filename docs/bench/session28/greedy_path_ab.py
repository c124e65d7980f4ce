"""A path through the sampler for batches whose every row is plain greedy (no logprobs, masks, bias
or penalties: the slow path's own predicates), swapped in against the full sampler step by step.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/greedy_path_ab.py int8|bf16 STEPS
"""
import os, sys, time, statistics
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.layers.sampler as S
mode = sys.argv[1]; N = int(sys.argv[2])
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=2 * N + 40)
slow = S.Sampler.__call__
def fast(self, logits, params, generators, num_outputs, histories=None):
    if all(p.greedy and p.logprobs is None and not p.logit_bias and not p.uses_penalties
           and not self._masks(p, n) for p, n in zip(params, num_outputs)):
        ids, maxima = self.argmax(logits)
        return S.SamplerOutput(ids, [], None, [], S._not_finite(maxima.tolist()))
    return slow(self, logits, params, generators, num_outputs, histories)
for _ in range(10): core.step()
times = {0: [], 1: []}
for i in range(N):
    for m in ((0, 1) if i % 2 else (1, 0)):
        S.Sampler.__call__ = slow if m == 0 else fast
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
a, b = (statistics.median(times[m]) * 1e3 for m in (0, 1))
print(f"{mode}: full sampler {a:.3f} ms, plain-greedy path {b:.3f} ms ({(b/a-1)*100:+.1f} %)")
