"""Prefix-cache keys: SHA-256 (now) against Python's hash() of a tuple (before), alternated.
A 2,000-token prompt in blocks of 16: register its 125 blocks, then look it up again."""
import statistics, time
from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.sequence import Sequence
from roseinfer.sampling_params import SamplingParams

class PyHash(BlockManager):
    @staticmethod
    def chain_hash(parent, token_ids):
        return hash((parent, tuple(token_ids)))

def one(cls):
    bm = cls(200, 16)
    ids = list(range(1000, 3000))
    a = Sequence(0, ids, len(ids), SamplingParams(max_tokens=8))
    t0 = time.perf_counter()
    bm.match_prefix(a); bm.allocate(a, len(ids)); a.num_computed_tokens = len(ids); bm.cache_computed_blocks(a)
    b = Sequence(1, ids + [5], len(ids) + 1, SamplingParams(max_tokens=8))
    hit = bm.match_prefix(b)
    assert hit == 2000
    return time.perf_counter() - t0

times = {BlockManager: [], PyHash: []}
for _ in range(200):
    for cls in (PyHash, BlockManager):
        times[cls].append(one(cls))
for cls, t in times.items():
    print(f"{'sha256' if cls is BlockManager else 'hash()'}: median {statistics.median(t)*1e6:.0f} us (register 125 blocks + look them up)")
