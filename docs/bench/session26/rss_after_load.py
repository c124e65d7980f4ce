"""Resident memory after loading the default model, with the loader's malloc_trim ("on") and without
("off"): `.venv/bin/python docs/bench/session26/rss_after_load.py on|off bf16|int8`, one process each."""
import sys, time
t = time.perf_counter()
import roseinfer.loader as L
if sys.argv[1] == "off":
    L.return_freed_memory = lambda: False
from roseinfer.llm import LLM
kw = {"quantization": "int8"} if "int8" in sys.argv[2:] else {}
t0 = time.perf_counter()
llm = LLM(model="smollm2", **kw)
t1 = time.perf_counter()
rss = [l for l in open("/proc/self/status").read().splitlines() if l.startswith("VmRSS")][0]
print(sys.argv[1:], rss, f"load {t1 - t0:.2f} s")
