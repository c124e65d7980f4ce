"""Greedy text under concurrency: the 10 prompts of p05 sent all at once (batched) to each server, compared with
the other server's and with the sequential answers."""
import json
from concurrent.futures import ThreadPoolExecutor
from common import post, MODEL
from p05_greedy import CHAT, COMP

def req(args):
    s, kind, x = args
    if kind == "chat":
        st, j, _ = post(s, "/v1/chat/completions", {"model": MODEL, "messages": x, "max_tokens": 32, "temperature": 0})
        return j["choices"][0]["message"]["content"]
    st, j, _ = post(s, "/v1/completions", {"model": MODEL, "prompt": x, "max_tokens": 32, "temperature": 0})
    return j["choices"][0]["text"]

jobs = [("chat", m) for m in CHAT] + [("comp", p) for p in COMP]
res = {}
for s in ("vllm", "rose"):
    seq = [req((s, k, x)) for k, x in jobs]
    with ThreadPoolExecutor(10) as ex:
        par = list(ex.map(req, [(s, k, x) for k, x in jobs]))
    res[s] = (seq, par)
    print(f"[{s}] batched == sequential: {seq == par}")
print(f"vllm batched == rose batched: {res['vllm'][1] == res['rose'][1]}")
for i, (a, b) in enumerate(zip(res["vllm"][1], res["rose"][1])):
    if a != b:
        print(f"  job {i}: vllm={json.dumps(a)[:150]} rose={json.dumps(b)[:150]}")
