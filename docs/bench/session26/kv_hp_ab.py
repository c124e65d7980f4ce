"""KV cache in 4 KB pages (shipped) vs 2 MB pages touched at allocation ("kv2M-prefault") vs 2 MB
pages faulted lazily ("kv2M-lazy"): engines in one process, bench throughput's workload in turns."""
import argparse, sys, types
import torch
import roseinfer.layers.kv_cache as kvc
from roseinfer.layers.huge_pages import huge_page_zeros
from roseinfer.llm import LLM
from roseinfer.bench.throughput import make_workload, DEFAULTS, run_throughput

class Proxy(types.ModuleType):
    def __init__(self, prefault):
        super().__init__("torchproxy"); self.prefault = prefault
    def __getattr__(self, name):
        return getattr(torch, name)
    def zeros(self, *shape, dtype=None, device=None):
        if len(shape) == 1 and isinstance(shape[0], tuple): shape = shape[0]
        t = huge_page_zeros(tuple(shape), dtype)
        if self.prefault: t.view(torch.uint8).fill_(0)
        return t

def build(variant):
    orig = kvc.torch
    if variant != "kv4K":
        kvc.torch = Proxy(variant.endswith("prefault"))
    try:
        return LLM(model="smollm2")
    finally:
        kvc.torch = orig

llms = {v: build(v) for v in sys.argv[1].split(",")}
print(open("/proc/self/smaps_rollup").read().split("AnonHugePages:")[1].split("\n")[0].strip(), "in huge pages", flush=True)
args = argparse.Namespace(seed=0, **DEFAULTS)
first = next(iter(llms.values()))
reqs = make_workload(args, first.tokenizer.vocab_size, first.tokenizer.special_token_ids)
for r in range(int(sys.argv[2])):
    print(" | ".join(f"{n} {run_throughput(l, reqs, progress=False)['output_throughput']:.1f}" for n, l in llms.items()), flush=True)
