import os, sys
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
eng = InferenceEngine(quantization=sys.argv[1] if len(sys.argv) > 1 else "int8")
def run(flag):
    if flag: os.environ["ROSE_SPMD"] = "1"
    else: os.environ.pop("ROSE_SPMD", None)
    core = eng.new_core()
    done = {}
    for i in range(3):  # one sequence at a time: the one-row steps
        core.add_request(str(i), [100 + (i * 37 + j * 11) % 5000 for j in range(40 + 30 * i)], SamplingParams(max_new_tokens=150, temperature=0, ignore_eos=True))
        fin = False
        while not fin:
            for o in core.step():
                done.setdefault(o.request_id, []).append(o.token_id)
                fin = fin or o.finish_reason is not None
    return done
a = run(False); b = run(True)
print("identical" if a == b else "DIFFERENT", {k: len(v) for k, v in a.items()}, [sum(x != y for x, y in zip(a[k], b[k])) for k in a])
