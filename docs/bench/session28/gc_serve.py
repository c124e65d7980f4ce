"""`roseinfer serve` with a gc callback printing every gen1/gen2 collection and its duration on stderr.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/gc_serve.py --model smollm2 --port 18765
"""
import gc, sys, time
t0 = [0.0]
def cb(phase, info):
    if phase == "start": t0[0] = time.perf_counter()
    elif info["generation"] >= 1:
        print(f"GC gen{info['generation']} {(time.perf_counter()-t0[0])*1e3:.1f} ms collected {info['collected']}", file=sys.stderr, flush=True)
gc.callbacks.append(cb)
from roseinfer.server.cli import serve_main as main
sys.exit(main(sys.argv[1:]))
