import sys, time, os
sys.path.insert(0, "/work/main")
os.environ.setdefault("OMP_NUM_THREADS", "2")
import torch; torch.set_num_threads(2)
M = "/tmp/s47/audit/tinysmol"
def llm(**kw):
    from roseinfer import LLM
    kw.setdefault("dtype", "float32")
    kw.setdefault("num_kv_blocks", 64)
    return LLM(model=M, **kw)
def trial(name, f):
    try:
        r = f()
        print(f"[{name}] OK:", r)
    except Exception as e:
        print(f"[{name}] {type(e).__name__}: {e}")
