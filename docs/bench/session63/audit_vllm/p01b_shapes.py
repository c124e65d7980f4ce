"""Detailed shapes: n=2 choices, logprobs object, prompt_logprobs, echo+logprobs text_offset, seed repeatability."""
import json
from common import post, MODEL, keydiff
B = {"model": MODEL, "prompt": "The capital of France is", "max_tokens": 3, "temperature": 0}
def show(label, **kw):
    body = dict(B); body.update(kw)
    print("===", label, json.dumps(kw))
    out = {}
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/completions", body)
        out[s] = j
        if st != 200:
            print(f"  [{s}] {st} {j}"); continue
        for c in j["choices"]:
            c2 = {k: v for k, v in c.items() if v is not None}
            print(f"  [{s}] {json.dumps(c2)[:900]}")
        print(f"  [{s}] usage {j['usage']}")
    return out
show("n=2 seed=7 t=1", n=2, seed=7, temperature=1.0, max_tokens=8)
show("n=2 seed=7 t=1 (repeat)", n=2, seed=7, temperature=1.0, max_tokens=8)
show("n=3 no seed temp 0", n=3, max_tokens=4)
show("logprobs=2", logprobs=2)
show("echo logprobs=1", echo=True, logprobs=1, max_tokens=1)
o = show("prompt_logprobs=1", prompt_logprobs=1, max_tokens=1)
show("prompt_logprobs=0", prompt_logprobs=0, max_tokens=1)
show("list prompts x n=2", prompt=["The capital of France is", "Once upon a time"], n=2, max_tokens=3)
show("min_tokens=5 w/ stop_token_ids", prompt="The capital of France is Paris.", min_tokens=5, stop_token_ids=[2], max_tokens=6)
show("echo + token-id prompt", prompt=[504, 3575, 282, 4649, 314], echo=True, max_tokens=2)
