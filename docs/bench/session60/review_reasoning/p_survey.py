# survey: what the seeds write unparsed (reasoning_format none), for picking cases
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
for name in URL:
    with client(name) as h:
        for seed in range(12):
            r = h.post("/v1/chat/completions", json=base(h, seed, reasoning_format="none")).json()
            print(name, seed, repr(r["choices"][0]["message"]["content"]))
