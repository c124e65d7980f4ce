"""Serve with the engine thread's phases timed per decode step (wall, µs medians) at exit."""
import atexit, collections, statistics as st, sys, time, threading, os
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.engine.model_runner import ModelRunner
from roseinfer.engine.client import EngineClient
from roseinfer.engine.scheduler import Scheduler
from roseinfer.server.cli import serve_main

acc = collections.defaultdict(list)
def wrap(cls, name, label):
    orig = getattr(cls, name)
    def f(*a, **k):
        t0 = time.perf_counter()
        r = orig(*a, **k)
        acc[label].append(time.perf_counter() - t0)
        return r
    setattr(cls, name, f)
wrap(Scheduler, "schedule", "schedule")
wrap(ModelRunner, "_forward", "forward")
wrap(ModelRunner, "sample", "sample")
wrap(ModelRunner, "_logits", "logits")
wrap(ModelRunner, "run", "run")
wrap(Scheduler, "on_computed", "on_computed")
wrap(LLMEngine, "_process", "process")
wrap(LLMEngine, "step", "step")
wrap(EngineClient, "_publish", "publish")
wrap(EngineClient, "_deliver", "deliver")
wrap(EngineClient, "_update_stats", "update_stats")
wrap(EngineClient, "_apply_commands", "apply")
wrap(EngineClient, "_settle_pending", "settle")
def report():
    for k, v in acc.items():
        v = v[50:] if len(v) > 100 else v
        print(f"{k:14s} n {len(v):6d} p50 {st.median(v)*1e6:8.1f} us mean {st.mean(v)*1e6:8.1f}", file=sys.stderr)
atexit.register(report)
sys.exit(serve_main(sys.argv[1:]))
