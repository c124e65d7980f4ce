"""The sampler alone (CPU backend passes), a step of B rows whose top-p / top-k sets are wide:
median ms a call (session 59, `wide_rows_ab.sh`)."""

import sys, time, torch, cProfile, pstats
from roseinfer.layers.sampler import Sampler
from roseinfer.layers.truncation import CandidateOps
from roseinfer.sampling_params import SamplingParams
from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig

torch.set_num_threads(2)
be = select_backend(EngineConfig(dtype="float32"), torch.device("cpu"))
ops = CandidateOps(be.top_candidates, be.logsumexp, be.sample_candidates)
V = 49152
cases = {
    "T0.7": dict(temperature=0.7),
    "top_p .95 flat": dict(temperature=0.7, top_p=0.95),
    "top_p .999999": dict(temperature=0.7, top_p=0.999999),
    "top_k V-1": dict(temperature=0.7, top_k=V - 1),
}
prof = False
for B in (1, 32):
    s = Sampler("cpu", 0, [0, 2], be.argmax, candidate_ops=ops)
    g = torch.Generator().manual_seed(0)
    base = torch.randn(B, V, generator=g) * 0.3
    for name, kw in cases.items():
        params = [SamplingParams(max_tokens=50, seed=i, **kw) for i in range(B)]
        states = [s.new_row_state(p) for p in params]
        for _ in range(2):
            s(base.clone(), params, states, [5] * B, None)
        if prof and B == 32 and name == "top_p .999999":
            pr = cProfile.Profile()
            pr.enable()
        ts = []
        for _ in range(7):
            x = base.clone()
            t = time.perf_counter()
            s(x, params, states, [5] * B, None)
            ts.append(time.perf_counter() - t)
        if prof and B == 32 and name == "top_p .999999":
            pr.disable()
            pstats.Stats(pr).sort_stats("tottime").print_stats(10)
        print(f"B={B:3d} {name:16s} median {sorted(ts)[3] * 1000:8.2f} ms", flush=True)
