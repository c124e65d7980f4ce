"""Session 41: the block manager's placement (adjacent runs, blocks taken ahead) against the
previous one (HEAD~ file, loaded beside), two engine cores of one model stepping in turns: each
keeps STREAMS sequences running (PROMPT-token distinct prompts, OUT tokens, greedy, ignore_eos),
a finished one replaced at once, until REQUESTS have finished; decode steps timed (steps where
every sequence decodes), and the share of adjacent entries in the block tables.
    PYTHONPATH=. .venv/bin/python alloc_ab.py MODE STREAMS PROMPT OUT REQUESTS"""
import importlib.util, statistics, sys, time
sys.path.insert(0, "benchmarks")
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
spec = importlib.util.spec_from_file_location("old_bm", "/tmp/s41/old_block_manager.py")
old = importlib.util.module_from_spec(spec); sys.modules["old_bm"] = old; spec.loader.exec_module(old)

class OldBM(old.BlockManager):
    def allocate(self, seq, n, may_need=0):
        super().allocate(seq, n)
    def trim(self, seq, num_tokens):
        return 0

mode, streams, plen, out_len, requests = sys.argv[1], *(int(x) for x in sys.argv[2:6])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
eng = InferenceEngine(model="smollm2", **opts[0])
cores = {}
for name in ("before", "after"):
    core = eng.new_core(kv_cache_dtype=opts[1], max_num_seqs=max(64, streams))
    if name == "before":
        bm = core.block_manager
        core.block_manager = core.scheduler.block_manager = OldBM(bm.num_blocks, bm.block_size, bm.enable_prefix_cache)
    cores[name] = core
print({n: c.block_manager.num_blocks for n, c in cores.items()}, flush=True)
params = SamplingParams(max_new_tokens=out_len, temperature=0, ignore_eos=True)
state = {n: {"next": 0, "done": 0, "steps": [], "adj": []} for n in cores}
def add(name):
    st = state[name]; i = st["next"]; st["next"] += 1
    cores[name].add_request(f"{name}{i}", [100 + (7 * i + j) % 5000 for j in range(plen)], params)
for name in cores:
    for _ in range(streams): add(name)
def adjacency(core):
    pairs = adj = 0
    for seq in core.scheduler.running:
        t = seq.block_table[: core.block_manager.blocks_needed(seq.num_computed_tokens)]
        pairs += max(0, len(t) - 1); adj += sum(1 for a, b in zip(t, t[1:]) if b == a + 1)
    return adj / pairs if pairs else 1.0
while any(state[n]["done"] < requests for n in cores):
    for name, core in cores.items():
        st = state[name]
        if st["done"] >= requests: continue
        decoding = all(s.num_computed_tokens >= s.num_prompt_tokens for s in core.scheduler.running) and not core.scheduler.num_waiting
        t = time.perf_counter(); outs = core.step(); dt = time.perf_counter() - t
        if decoding and len(core.scheduler.running) == streams:
            st["steps"].append(dt); st["adj"].append(adjacency(core))
        for o in outs:
            if o.finished:
                st["done"] += 1
                if st["next"] < requests + streams: add(name)
for name in cores:
    st = state[name]
    print(f"{mode} {name}: {len(st['steps'])} decode steps of {streams}, median {statistics.median(st['steps'])*1e3:.2f} ms, "
          f"adjacent table entries {statistics.mean(st['adj']):.0%}", flush=True)
