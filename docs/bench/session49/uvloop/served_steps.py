"""Serve with each engine step timed (wall, thread CPU); at exit print decode/prefill medians."""
import atexit, statistics as st, sys, time
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.server.cli import serve_main

rows = []
orig = LLMEngine.step
def step(self):
    t0 = time.perf_counter(); c0 = time.thread_time()
    out = orig(self)
    rows.append((t0, time.perf_counter() - t0, time.thread_time() - c0, self.last_step.num_prefill_tokens, self.last_step.num_batched_tokens))
    return out
LLMEngine.step = step
import os
if os.environ.get('SWITCH'): sys.setswitchinterval(float(os.environ['SWITCH']))

def report():
    rows_min = int(os.environ.get("DECODE_ROWS", "24"))  # a decode step of at least this many
    dec = [r for r in rows if r[3] == 0 and r[4] >= rows_min]
    pre = [r for r in rows if r[3] > 0]
    if dec:
        print(f"steps {len(rows)}; decode(>={rows_min} rows) {len(dec)}: wall p50 {st.median(r[1] for r in dec)*1e3:.2f} ms, "
              f"sum {sum(r[1] for r in dec):.2f} s, cpu p50 {st.median(r[2] for r in dec)*1e3:.2f}; "
              f"prefill {len(pre)}: sum {sum(r[1] for r in pre):.2f} s, tokens {sum(r[3] for r in pre)}", file=sys.stderr)
    if len(rows) > 1:
        span = rows[-1][0] + rows[-1][1] - rows[0][0]
        print(f"switch {sys.getswitchinterval()} span {span:.2f} s, in steps {sum(r[1] for r in rows):.2f} s", file=sys.stderr)
atexit.register(report)
import uvicorn
_Config = uvicorn.Config
def Config(*a, **k):
    if os.environ.get('LOOP'): k['loop'] = os.environ['LOOP']
    if os.environ.get('HTTP'): k['http'] = os.environ['HTTP']
    print('uvicorn', k['loop'], k['http'], file=sys.stderr)
    return _Config(*a, **k)
uvicorn.Config = Config
sys.exit(serve_main(sys.argv[1:]))
