# How often does a seeded T=1 (no truncation) completion change when one greedy request runs beside it?
from h import *
import concurrent.futures as cf, math
P = "Once upon a time"
def run(b): s,j = comp(dict(b)); return j["choices"][0]
diff = 0; N = 16; edges = []
for seed in range(100, 100+N):
    for label, extra in (("T1", {}), ("T1 top_p .95", {"top_p":0.95})):
        b = {"prompt":P,"max_tokens":32,"temperature":1.0,"seed":seed,"logprobs":1, **extra}
        a = run(b)
        with cf.ThreadPoolExecutor(2) as ex:
            f = ex.submit(run, b); g = ex.submit(run, {"prompt":"The weather today is","max_tokens":40,"temperature":0})
            r = f.result(); g.result()
        if r["text"] != a["text"]:
            diff += 1
            k = next(i for i,(x,y) in enumerate(zip(a["logprobs"]["tokens"], r["logprobs"]["tokens"])) if x!=y)
            print(label, "seed", seed, "DIFF at", k, repr(a["logprobs"]["tokens"][k]), a["logprobs"]["token_logprobs"][k], "vs", repr(r["logprobs"]["tokens"][k]), r["logprobs"]["token_logprobs"][k])
        else:
            print(label, "seed", seed, "same")
print("diverged", diff, "of", 2*N)
