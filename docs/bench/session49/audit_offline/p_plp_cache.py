from common import *
from roseinfer import SamplingParams
L = llm()
P = "The quick brown fox jumps over the lazy dog. " * 6
ids = L.encode(P); print("prompt tokens", len(ids))
sp = SamplingParams(temperature=0, max_tokens=2, prompt_logprobs=1)
a = L.generate([ids], sp, use_tqdm=False)[0]
b = L.generate([ids], sp, use_tqdm=False)[0]
print("cached tokens run1/run2:", a.metrics.num_cached_tokens if hasattr(a,'metrics') else None, b.metrics.num_cached_tokens if hasattr(b,'metrics') else None)
def flat(r): return [None if p is None else round(p[t].logprob, 4) for p, t in zip(r.prompt_logprobs, r.prompt_token_ids)]
fa, fb = flat(a), flat(b)
print("len", len(fa), len(fb), "equal:", fa == fb)
# and with a cached prefix from a plain request
L2 = llm()
L2.generate([ids], SamplingParams(temperature=0, max_tokens=2), use_tqdm=False)
c = L2.generate([ids], sp, use_tqdm=False)[0]
print("after plain warm, cached:", c.metrics.num_cached_tokens, "equal:", flat(c) == fa)
